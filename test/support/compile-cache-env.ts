// The test run's Node compile cache (vitest.config.ts) for a child started with an explicit env:
// without it, each start compiles and type-strips our sources again.
export function compileCacheEnv(): Record<string, string> {
  const dir = process.env.NODE_COMPILE_CACHE;
  return dir === undefined || dir === '' ? {} : { NODE_COMPILE_CACHE: dir };
}

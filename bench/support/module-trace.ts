// An `--import` file that lists every module a process resolves, for "which modules does the
// manager load, and from where": each line is `<parent URL> <module URL>`, the first time the
// module is resolved, written at exit to $MODULE_TRACE_DIR (default: the temporary folder) as
// modules-<pid>.txt. The resolve hook runs in the process's own thread (module.registerHooks).
// Usage, the manager as the rig starts it (the rig passes no other variable to the manager):
//   BENCH_MANAGER_NODE_OPTIONS="--import $PWD/bench/support/module-trace.ts" \
//     npx node bench/manager-scale.bench.ts
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const lines: string[] = [];
const seen = new Set<string>();
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    if (!seen.has(resolved.url)) {
      seen.add(resolved.url);
      lines.push(`${context.parentURL ?? '-'} ${resolved.url}`);
    }
    return resolved;
  },
});
process.on('exit', () => {
  const dir = process.env.MODULE_TRACE_DIR ?? tmpdir();
  writeFileSync(join(dir, `modules-${process.pid}.txt`), `${lines.join('\n')}\n`);
});

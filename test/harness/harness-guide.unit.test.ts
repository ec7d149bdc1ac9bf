// docs/harness.md shows the example project's test word for word, so the test a reader copies from
// the guide is the one `npm run example:check` runs (in .ci/run) and passes.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string): string =>
  readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('docs/harness.md', () => {
  it("shows examples/harness-consumer's test file as it is", () => {
    const guide = read('docs/harness.md');
    const file = read('examples/harness-consumer/test/consensus.test.ts');
    const blocks = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks).toContain(file);
  });

  it("shows the example's package.json dependencies as they are", () => {
    const guide = read('docs/harness.md');
    const manifest = JSON.parse(read('examples/harness-consumer/package.json')) as {
      devDependencies: Record<string, string>;
    };
    for (const [name, version] of Object.entries(manifest.devDependencies))
      expect(guide).toContain(`"${name}": "${version}"`);
  });
});

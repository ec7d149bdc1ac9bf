// Fails when src/pocket/gen differs from what `buf generate` makes of proto/ now
// (run by `npm run check`; fix with `npm run gen`).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const committed = 'src/pocket/gen';

function listFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((entry) => statSync(join(root, entry)).isFile())
    .map((entry) => relative(root, join(root, entry)))
    .sort();
}

const scratch = mkdtempSync(join(tmpdir(), 'cm-gen-'));
try {
  execFileSync('buf', ['generate', '--output', scratch], { stdio: 'inherit' });
  const fresh = join(scratch, committed);
  const want = listFiles(fresh);
  const have = listFiles(committed);
  const stale = [
    ...want.filter(
      (f) =>
        !have.includes(f) ||
        readFileSync(join(fresh, f), 'utf8') !== readFileSync(join(committed, f), 'utf8'),
    ),
    ...have.filter((f) => !want.includes(f)),
  ];
  if (stale.length > 0) {
    console.error(`generated code is stale (${stale.join(', ')}); run \`npm run gen\``);
    process.exit(1);
  }
  console.log(`generated code is current (${want.length} files)`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

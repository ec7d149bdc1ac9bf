// Fails when src/pocket/gen or src/kube-emulator/protobuf/gen differs from what `buf generate`
// (buf.gen.yaml, buf.gen.k8s.yaml) makes of proto/ now (run by `npm run check`; fix with
// `npm run gen`).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

/** Each buf template and the folder it generates. */
const outputs = [
  { template: 'buf.gen.yaml', committed: 'src/pocket/gen' },
  { template: 'buf.gen.k8s.yaml', committed: 'src/kube-emulator/protobuf/gen' },
];

function listFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((entry) => statSync(join(root, entry)).isFile())
    .map((entry) => relative(root, join(root, entry)))
    .sort();
}

let files = 0;
for (const { template, committed } of outputs) files += check(template, committed);
console.log(`generated code is current (${files} files)`);

function check(template: string, committed: string): number {
  const scratch = mkdtempSync(join(tmpdir(), 'cm-gen-'));
  try {
    execFileSync('buf', ['generate', '--template', template, '--output', scratch], {
      stdio: 'inherit',
    });
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
    return want.length;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// `npm run example:check`: the harness example (examples/harness-consumer) as a user takes it — a
// copy in a folder of its own whose `file:` dependency names this clone — passes `npm install &&
// npm test`, and leaves no process behind. Run by .ci/run; takes about a minute (most of it npm).
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const EXAMPLE = join(ROOT, 'examples/harness-consumer');

/** Processes whose command line, working folder or environment mention `folder`. */
function processesOf(folder: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
      if (argv.includes(folder) || environ.includes(folder)) found.push(`${entry} ${argv}`);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): void {
  process.stdout.write(`$ ${command} ${args.join(' ')}   (in ${cwd})\n`);
  const result = spawnSync(command, args, { cwd, env, stdio: 'inherit' });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}`);
}

const copy = mkdtempSync(join(tmpdir(), 'harness-example-'));
let failed = true;
try {
  cpSync(EXAMPLE, copy, {
    recursive: true,
    filter: (source) => !/[/\\](node_modules|package-lock\.json)$/.test(source),
  });
  const manifest = JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  // What the guide tells a user to do: point the dependency at the clone.
  manifest.devDependencies['cluster-manager'] = `file:${ROOT}`;
  writeFileSync(join(copy, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  // The devnets' folders under the copy, so that anything left behind names it.
  const tmp = join(copy, 'tmp');
  mkdirSync(tmp);
  // As a user's shell has it: npm (and the Node it runs on) from PATH, without this repo's
  // node_modules/.bin that `npm run` put first.
  // npm's own variables and the suite's bundles are not a user's.
  const env: NodeJS.ProcessEnv = {
    ...Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) => !name.startsWith('npm_') && name !== 'CLUSTER_MANAGER_BUNDLES',
      ),
    ),
    PATH: (process.env.PATH ?? '')
      .split(':')
      .filter((folder) => !folder.includes('node_modules'))
      .join(':'),
    TMPDIR: tmp,
  };
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], copy, env);
  run('npm', ['test'], copy, env);
  // A watchdog exits within 100 ms of its devnet's stop; anything else should be gone already.
  let left = processesOf(copy);
  for (const deadline = Date.now() + 5_000; left.length > 0 && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = processesOf(copy);
  }
  if (left.length > 0) throw new Error(`left running after npm test:\n${left.join('\n')}`);
  process.stdout.write(`the example passed in a copy (${copy}) and left no process behind\n`);
  failed = false;
} finally {
  if (failed) process.stderr.write(`the copy is kept for inspection: ${copy}\n`);
  else rmSync(copy, { recursive: true, force: true });
}

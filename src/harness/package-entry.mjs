// `cluster-manager/harness` as another project imports it (package.json "exports"). Plain
// JavaScript, so that any Node can read it and say what is wrong: the harness is TypeScript run by
// Node 24's type stripping, as are the manager and the nodes it starts, and its dependencies need
// Node 22.19+ — on an older Node, loading it failed far from the cause (`Unknown file extension
// ".ts"`, or `Map.groupBy is not a function` from vitest's own reporter). The names below are
// index.ts's values (test/harness/package-entry.test.ts checks that they match); the types come
// from index.ts through the "types" condition.
import { fileURLToPath } from 'node:url';

const major = Number(process.versions.node.split('.')[0]);
const here = fileURLToPath(import.meta.url);

/** Refuses to load, naming the fix; written to stderr too, where a crashing reporter cannot lose it. */
function refuse(code, message) {
  process.stderr.write(`\n${message}\n\n`);
  const error = new Error(message);
  error.name = 'HarnessSetupError';
  error.code = code;
  throw error;
}

if (major < 24)
  refuse(
    'ERR_HARNESS_NODE_VERSION',
    `cluster-manager/harness needs Node.js 24 or newer, and this is Node ${process.version} (${process.execPath}). ` +
      'Run the tests on Node 24: add "node": "^24.9.0" to your devDependencies and run them through npm ' +
      '(`npm test`: npm scripts put node_modules/.bin, and its node, first on PATH), or switch your Node ' +
      '(nvm install 24). See docs/harness.md in cluster-manager.',
  );
if (here.split(/[\\/]/).includes('node_modules'))
  refuse(
    'ERR_HARNESS_NOT_LINKED',
    `cluster-manager is installed as a copy (${here}): Node runs no TypeScript inside node_modules. ` +
      'Depend on your clone as a link: "cluster-manager": "file:<path to the clone>" (what npm does with a ' +
      'file: folder unless install-links is set), after `npm ci` in the clone. See docs/harness.md.',
  );

const harness = await import('./index.ts');

export const {
  ChainLedger,
  CommandLineSampler,
  commandLine,
  descendants,
  findKeys,
  findKubectl,
  Harness,
  isAlive,
  keyNeedles,
  pending,
  Pending,
  prng,
  runKubectl,
  scanFilesForKeys,
  waitFor,
  WaitTimeout,
} = harness;

// Regenerates the localnet's generated manifests deterministically, with the repo's own commands:
// the keys Secret (`cluster-manager keys generate`, fixed seed) and the genesis that stakes the
// first validators (`localnet-node genesis`, fixed genesis time).
//
//   npm run localnet:manifests                          write both files
//   npm run localnet:manifests -- --check               exit 1 when a checked-in file is stale
//   node scripts/localnet-manifests.ts --genesis-for N  print the genesis for N validators (Tilt)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The localnet's fixed inputs. The Tiltfile and the manifests rely on them (tests check). */
export const LOCALNET = {
  /** Keys in the Secret: validators beyond the genesis ones can join up to this many. */
  keyCount: 32,
  /** Public on purpose: these keys guard nothing but a local devnet. */
  seed: 'cluster-manager localnet',
  secretName: 'validators-private-keys',
  /** Genesis validators, equal to the StatefulSet's replicas. */
  validators: 4,
  /** The DNS name of pod validator-N under the headless Service `validator` (its P2P port). */
  serviceUrlTemplate: 'validator-{ordinal}.validator:42069',
  /** The genesis time of Pocket's LocalNet; fixed so that the same inputs give the same chain. */
  genesisTime: '2022-09-19T18:05:02Z',
  keysFile: 'k8s/base/localnet/validators-private-keys.yaml',
  genesisFile: 'k8s/base/localnet/genesis.json',
} as const;

const bin = (name: string): string => join(root, 'src', 'bin', `${name}.ts`);

function run(entry: string, args: readonly string[]): string {
  if (!existsSync(bin(entry))) {
    throw new Error(`src/bin/${entry}.ts does not exist; cannot run \`${entry} ${args[0] ?? ''}\``);
  }
  return execFileSync(process.execPath, [bin(entry), ...args], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** Arguments of `cluster-manager keys generate` for the Secret. */
export function keysArgs(out: string): string[] {
  return [
    'keys',
    'generate',
    '--count',
    String(LOCALNET.keyCount),
    '--seed',
    LOCALNET.seed,
    '--name',
    LOCALNET.secretName,
    '--out',
    out,
  ];
}

/** Arguments of `localnet-node genesis` (which prints the genesis JSON). */
export function genesisArgs(keysFile: string, validators: number): string[] {
  return [
    'genesis',
    '--keys',
    keysFile,
    '--validators',
    String(validators),
    '--service-url-template',
    LOCALNET.serviceUrlTemplate,
    '--genesis-time',
    LOCALNET.genesisTime,
  ];
}

function generate(dir: string, validators: number): { keys: string; genesis: string } {
  const keysFile = join(dir, 'validators-private-keys.yaml');
  run('cluster-manager', keysArgs(keysFile));
  const genesis = run('localnet-node', genesisArgs(keysFile, validators));
  return { keys: readFileSync(keysFile, 'utf8'), genesis };
}

function isSameJson(a: string, b: string): boolean {
  return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b));
}

function main(argv: readonly string[]): number {
  const { values } = parseArgs({
    args: [...argv],
    options: { check: { type: 'boolean' }, 'genesis-for': { type: 'string' } },
    strict: true,
  });
  const genesisFor = values['genesis-for'];
  if (genesisFor !== undefined) {
    const count = Number(genesisFor);
    if (!/^\d+$/.test(genesisFor) || count < 1 || count > LOCALNET.keyCount) {
      process.stderr.write(`--genesis-for must be 1…${LOCALNET.keyCount}, got ${genesisFor}\n`);
      return 2;
    }
    process.stdout.write(run('localnet-node', genesisArgs(join(root, LOCALNET.keysFile), count)));
    return 0;
  }
  const scratch = mkdtempSync(join(tmpdir(), 'cm-localnet-'));
  try {
    const fresh = generate(scratch, LOCALNET.validators);
    if (values.check === true) {
      const stale = [
        readFileSync(join(root, LOCALNET.keysFile), 'utf8') === fresh.keys
          ? []
          : [LOCALNET.keysFile],
        isSameJson(readFileSync(join(root, LOCALNET.genesisFile), 'utf8'), fresh.genesis)
          ? []
          : [LOCALNET.genesisFile],
      ].flat();
      if (stale.length > 0) {
        process.stderr.write(`stale: ${stale.join(', ')}; run \`npm run localnet:manifests\`\n`);
        return 1;
      }
      process.stdout.write('localnet manifests are current\n');
      return 0;
    }
    writeFileSync(join(root, LOCALNET.keysFile), fresh.keys, { mode: 0o600 });
    writeFileSync(join(root, LOCALNET.genesisFile), fresh.genesis);
    process.stdout.write(`wrote ${LOCALNET.keysFile} and ${LOCALNET.genesisFile}\n`);
    return 0;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (error: unknown) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}

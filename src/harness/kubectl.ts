// kubectl for tests and users' suites: which binary to run (`$KUBECTL`, else a kubectl on PATH of
// version 1.27 or newer, else the versioned binaries that sit beside this machine's kubectl
// dispatcher, docs: NOTES.md), run by absolute path with an args array, no shell, a private cache
// dir. When there is none, `kubectlMissing` says why, so a test can skip with that reason.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** One kubectl binary and the client version it reports. */
export interface KubectlBinary {
  readonly path: string;
  /** `1.32.4` (from `kubectl version --client`). */
  readonly version: string;
  readonly minor: number;
  /** How it was found. */
  readonly source: 'KUBECTL' | 'PATH' | 'versioned';
}

/** The oldest kubectl the tests speak to (and the oldest the emulator is checked against). */
export const MIN_KUBECTL_MINOR = 27;

let chosen: KubectlBinary | null | undefined;
let every: KubectlBinary[] | undefined;
let missingReason = '';

/** The kubectl the tests use, or undefined (then `kubectlMissing()` says why). */
export function findKubectl(): KubectlBinary | undefined {
  if (chosen === undefined) chosen = choose() ?? null;
  return chosen ?? undefined;
}

/** Why `findKubectl()` found nothing ('' when it found one). */
export function kubectlMissing(): string {
  findKubectl();
  return missingReason;
}

/**
 * Every kubectl of version 1.27 or newer this machine has, one per minor version, oldest first:
 * `$KUBECTL`, the kubectl on PATH and the versioned binaries (`kubectl.1.NN`) beside it.
 * Conformance tests run each behaviour with each of them.
 */
export function kubectlVersions(): readonly KubectlBinary[] {
  if (every !== undefined) return every;
  const byMinor = new Map<number, KubectlBinary>();
  const candidates: { path: string; source: KubectlBinary['source'] }[] = [];
  const fromEnv = process.env.KUBECTL;
  if (fromEnv !== undefined && fromEnv !== '')
    candidates.push({ path: fromEnv, source: 'KUBECTL' });
  const onPath = whichKubectl();
  for (const path of versionedBeside(onPath)) candidates.push({ path, source: 'versioned' });
  if (onPath !== undefined) candidates.push({ path: onPath, source: 'PATH' });
  for (const candidate of candidates) {
    const binary = probe(candidate.path, candidate.source);
    if (binary === undefined || binary.minor < MIN_KUBECTL_MINOR) continue;
    if (!byMinor.has(binary.minor)) byMinor.set(binary.minor, binary);
  }
  every = [...byMinor.values()].sort((a, b) => a.minor - b.minor);
  return every;
}

function choose(): KubectlBinary | undefined {
  const fromEnv = process.env.KUBECTL;
  if (fromEnv !== undefined && fromEnv !== '') {
    const binary = probe(fromEnv, 'KUBECTL');
    if (binary !== undefined && binary.minor >= MIN_KUBECTL_MINOR) return binary;
    missingReason = `$KUBECTL=${fromEnv} is not a kubectl of version 1.${MIN_KUBECTL_MINOR} or newer`;
    return undefined;
  }
  const onPath = whichKubectl();
  const fromPath = onPath === undefined ? undefined : probe(onPath, 'PATH');
  if (fromPath !== undefined && fromPath.minor >= MIN_KUBECTL_MINOR) return fromPath;
  for (const path of versionedBeside(onPath).reverse()) {
    const binary = probe(path, 'versioned');
    if (binary !== undefined && binary.minor >= MIN_KUBECTL_MINOR) return binary;
  }
  missingReason =
    onPath === undefined
      ? 'no kubectl on PATH and $KUBECTL is not set'
      : `the kubectl on PATH (${onPath}) is older than 1.${MIN_KUBECTL_MINOR} or does not answer \`kubectl version --client\``;
  return undefined;
}

function whichKubectl(): string | undefined {
  for (const folder of (process.env.PATH ?? '').split(':')) {
    if (folder === '' || !isAbsolute(folder)) continue;
    const candidate = join(folder, 'kubectl');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** `kubectl.1.NN` files next to the real file behind `kubectl` (Google Cloud SDK's layout). */
function versionedBeside(kubectl: string | undefined): string[] {
  if (kubectl === undefined) return [];
  try {
    const folder = dirname(realpathSync(kubectl));
    return readdirSync(folder)
      .filter((name) => /^kubectl\.1\.\d+$/.test(name))
      .sort((a, b) => Number(a.split('.')[2]) - Number(b.split('.')[2]))
      .map((name) => join(folder, name));
  } catch {
    return [];
  }
}

function probe(path: string, source: KubectlBinary['source']): KubectlBinary | undefined {
  try {
    const out = execFileSync(path, ['version', '--client', '-o', 'json'], {
      encoding: 'utf8',
      timeout: 15_000,
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
    });
    const client = (JSON.parse(out) as { clientVersion?: { gitVersion?: string } }).clientVersion;
    const match = /^v(\d+)\.(\d+)\.(\d+)/.exec(client?.gitVersion ?? '');
    if (match === null) return undefined;
    return {
      path,
      version: `${match[1]}.${match[2]}.${match[3]}`,
      minor: Number(match[2]),
      source,
    };
  } catch {
    return undefined;
  }
}

export interface RunKubectlOptions {
  kubeconfig: string;
  cacheDir: string;
  home: string;
  timeoutMs?: number;
  /** Another binary than `findKubectl()` (conformance tests run each version). */
  binary?: KubectlBinary;
  /** Written to kubectl's stdin. */
  input?: string;
}

/** Runs kubectl with `--kubeconfig`, a cache dir of its own and a 10 s request timeout. */
export function runKubectl(
  args: readonly string[],
  options: RunKubectlOptions,
): Promise<KubectlResult> {
  const binary = options.binary ?? findKubectl();
  if (binary === undefined) throw new Error(`kubectl is needed: ${kubectlMissing()}`);
  return new Promise((resolve) => {
    const child = execFile(
      binary.path,
      [
        `--kubeconfig=${options.kubeconfig}`,
        `--cache-dir=${options.cacheDir}`,
        '--request-timeout=10s',
        ...args,
      ],
      {
        timeout: options.timeoutMs ?? 30_000,
        env: { PATH: process.env.PATH ?? '', HOME: options.home },
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
    else child.stdin?.end();
  });
}

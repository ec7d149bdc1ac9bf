// What a started devnet suggests to type next, and `cluster-manager devnet env`'s lines. Every
// suggestion must work exactly as printed: the folder flag when the devnet is not `./.devnet`,
// a scale that changes something, `--drive` when no block comes without it.
import { relative, resolve } from 'node:path';
import { findsByItself, managerUrlOf, type DevnetInfo } from '../cli/devnet-file.ts';

/**
 * How to name the devnet's folder in a command typed in `cwd`: empty when the CLI finds it by
 * itself (the nearest `.devnet` from `cwd` up).
 */
export function devnetFlag(dir: string, cwd: string): string {
  if (findsByItself(cwd, dir)) return '';
  const rel = relative(cwd, dir);
  const shown = rel !== '' && !rel.startsWith('..') && !rel.startsWith('/') ? rel : resolve(dir);
  return ` --devnet ${shellQuote(shown)}`;
}

/**
 * A scale target that changes something: two more validators, within the keys; else one less.
 * On `--fidelity v1` late joiners never vote and every row counts toward the quorum, so only
 * fewer than half the genesis set may join (`k < N/2`: 4 genesis validators carry one more, 4 of
 * 5); a larger target would be refused (NO_STATE_SYNC), so it is not suggested.
 */
export function suggestedScale(
  validators: number,
  keys: number,
  fidelity: 'intended' | 'v1' = 'intended',
): number | undefined {
  const joiners = fidelity === 'v1' ? Math.min(2, Math.ceil(validators / 2) - 1) : 2;
  // A v1 set of 1 or 2 can take no joiner, and one less would be below its minimum set.
  if (joiners <= 0) return undefined;
  const up = Math.min(keys, validators + joiners);
  if (up > validators) return up;
  return validators > 1 ? validators - 1 : undefined;
}

/**
 * The `try:` lines printed under `devnet ready`, for a shell in `cwd`. `run` names the Node
 * binary and the cluster-manager entry point for the own-manager line of `--no-manager`: that
 * manager runs as the process itself (npm and npx do not pass SIGTERM on to what they start).
 */
export function readyHints(
  info: DevnetInfo,
  cwd: string,
  run: { node: string; entry: string },
): string[] {
  const flag = devnetFlag(info.dir, cwd);
  const cli = `npx cluster-manager${flag}`;
  const kubectl = `kubectl --kubeconfig ${shellQuote(displayPath(info.kubeconfig, cwd))} get pods`;
  if (info.managerUrl === null) {
    const env = shellQuote(displayPath(`${info.dir}/manager.env`, cwd));
    const node = shellQuote(displayPath(run.node, cwd));
    const entry = shellQuote(displayPath(run.entry, cwd));
    return [
      kubectl,
      `${node} --env-file=${env} ${entry} run   # a manager of your own; Ctrl-C or SIGTERM stops it`,
      `${cli} status`,
    ];
  }
  const target = suggestedScale(info.validators, info.keys, info.fidelity);
  const drive = info.pacemaker === 'manual' ? ' --drive' : '';
  // On v1 a late joiner is staked but never votes (no state sync): `--wait active` could only
  // fail, so the hint waits for the stake.
  const wait = info.fidelity === 'v1' ? 'staked' : 'active';
  return [
    ...(target === undefined ? [] : [`${cli} scale ${target} --wait ${wait}${drive}`]),
    `${cli} status`,
    kubectl,
  ];
}

/** The variables a shell wants for this devnet: the manager, its token, kubectl, the chain. */
export function devnetEnv(info: DevnetInfo): Record<string, string> {
  const vars: Record<string, string | null | undefined> = {
    CLUSTER_MANAGER_URL: managerUrlOf(info),
    CLUSTER_MANAGER_TOKEN: info.token,
    KUBECONFIG: info.kubeconfig,
    POCKET_REMOTE_CLI_URL: info.chainRpcUrl,
  };
  return Object.fromEntries(
    Object.entries(vars).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

/** `export NAME=value` lines for a POSIX shell. */
export function envLines(info: DevnetInfo): string[] {
  return Object.entries(devnetEnv(info)).map(
    ([name, value]) => `export ${name}=${shellQuote(value)}`,
  );
}

/** A path as typed from `cwd`: relative when inside it. */
function displayPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel !== '' && !rel.startsWith('..') && !rel.startsWith('/') ? rel : path;
}

/** Quotes a word for a POSIX shell when it holds anything but safe characters. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

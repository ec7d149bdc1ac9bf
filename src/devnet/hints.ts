// What a started devnet suggests to type next, and `cluster-manager devnet env`'s lines. Every
// suggestion must work exactly as printed: the folder flag when the devnet is not `./.devnet`,
// a scale that changes something, `--drive` when no block comes without it.
import { relative, resolve } from 'node:path';
import {
  DEFAULT_DEVNET_DIR,
  findsByItself,
  managerUrlOf,
  type DevnetInfo,
} from '../cli/devnet-file.ts';

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
 * How many late joiners a `--fidelity v1` chain of `genesis` validators survives. V1's leader
 * never counts its own vote, late joiners never vote, and every row counts toward
 * `num > 2/3 × rows` (docs/pocket-v1-localnet.md): the genesis voters besides the leader must be
 * more than 2/3 of all rows, `3(N − 1) > 2(N + k)`, so `k < (N − 3)/2`. 4 or 5 genesis validators
 * take none, 7 take one, 8 take two; fewer than 4 make no block at all.
 */
export function v1Joiners(genesis: number): number {
  return Math.max(0, Math.floor((genesis - 4) / 2));
}

/** The smallest genesis set of a `--fidelity v1` devnet whose hint can suggest a scale. */
const V1_SCALABLE_GENESIS = 7;

/**
 * A scale target that changes something: two more validators, within the keys; else one less.
 * On `--fidelity v1` only what V1 survives (`v1Joiners`), and never one less: the unstaked row
 * still counts and its voter is gone (a genesis validator down halts V1 too). Undefined when no
 * scale of this devnet works.
 */
export function suggestedScale(
  validators: number,
  keys: number,
  fidelity: 'intended' | 'v1' = 'intended',
): number | undefined {
  const joiners = fidelity === 'v1' ? Math.min(2, v1Joiners(validators)) : 2;
  const up = Math.min(keys, validators + joiners);
  if (up > validators) return up;
  return fidelity !== 'v1' && validators > 1 ? validators - 1 : undefined;
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
  const first =
    target !== undefined
      ? [`${cli} scale ${target} --wait ${wait}${drive}`]
      : info.fidelity === 'v1'
        ? [v1Restart(info, cwd)]
        : [];
  return [...first, `${cli} status`, kubectl];
}

/**
 * A `--fidelity v1` devnet no scale of which V1 survives: the devnet to start instead (after this
 * one stops), whose own hint then suggests `scale 8`.
 */
function v1Restart(info: DevnetInfo, cwd: string): string {
  const dir =
    resolve(cwd, DEFAULT_DEVNET_DIR) === resolve(info.dir)
      ? ''
      : ` --dir ${shellQuote(displayPath(info.dir, cwd))}`;
  const cli = info.txMode === 'cli' ? ' --tx-mode cli' : '';
  const why =
    info.validators < 4
      ? `V1 makes no block with ${info.validators} validators`
      : `V1 halts on any scale of ${info.validators} genesis validators`;
  return `npx cluster-manager devnet --fidelity v1 --validators ${V1_SCALABLE_GENESIS}${cli}${dir}   # after Ctrl-C: ${why}; ${V1_SCALABLE_GENESIS} take scale ${V1_SCALABLE_GENESIS + 1}`;
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

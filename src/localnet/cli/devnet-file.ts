// The devnet a localnet-cli is run next to: `<dir>/devnet.json` (written by `cluster-manager
// devnet`; by default the nearest `.devnet` from the current folder up, as git finds `.git`) gives the chain's RPC URL and the
// manager's URL and token, so `npx localnet-cli …` in the project folder talks to the devnet
// without flags or env. The manager's URL and token are taken only while the devnet that wrote
// the file runs (its devnet.lock): a stopped devnet's port may be another server's by now.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { nearestDevnetDir } from '../../cli/devnet-file.ts';
import { devnetStateOf, notRunningReason } from '../../cli/devnet-lock-file.ts';
import { P1Error } from './p1-io.ts';

export const DEFAULT_DEVNET_DIR = '.devnet';

export interface DevnetEndpoints {
  chainRpcUrl: string | undefined;
  managerUrl: string | undefined;
  token: string | undefined;
  /** Why the devnet's manager is not used: the devnet that wrote the file does not run. */
  notRunning?: string;
}

const NONE: DevnetEndpoints = { chainRpcUrl: undefined, managerUrl: undefined, token: undefined };

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/**
 * Reads `<dir>/devnet.json`. Without an explicit `dir`, a missing file means "no devnet here"
 * (nothing is taken from it); with one, a missing or malformed file is a `P1Error` naming it.
 */
export function readDevnetEndpoints(dir: string | undefined, cwd: string): DevnetEndpoints {
  const folder =
    dir === undefined
      ? (nearestDevnetDir(cwd) ?? resolve(cwd, DEFAULT_DEVNET_DIR))
      : resolve(cwd, dir);
  const file = join(folder, 'devnet.json');
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (error: unknown) {
    if (dir === undefined) return NONE;
    throw new P1Error(
      `--devnet ${dir}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  let info: unknown;
  try {
    info = JSON.parse(raw);
  } catch {
    throw new P1Error(`${file} is not JSON`);
  }
  if (typeof info !== 'object' || info === null) throw new P1Error(`${file} is not an object`);
  const fields = info as Record<string, unknown>;
  const state = devnetStateOf(folder, {
    ...(typeof fields.pid === 'number' ? { pid: fields.pid } : {}),
    ...(typeof fields.startedAt === 'string' ? { startedAt: fields.startedAt } : {}),
  });
  if (state.kind !== 'running')
    return {
      chainRpcUrl: text(fields.chainRpcUrl),
      managerUrl: undefined,
      token: undefined,
      notRunning: notRunningReason(folder, state, dir),
    };
  return {
    chainRpcUrl: text(fields.chainRpcUrl),
    managerUrl: text(fields.managerUrl),
    token: text(fields.token),
  };
}

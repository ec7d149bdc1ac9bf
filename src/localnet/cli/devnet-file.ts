// The devnet a localnet-cli is run next to: `<dir>/devnet.json` (written by `cluster-manager
// devnet`, default dir `.devnet` in the current folder) gives the chain's RPC URL and the
// manager's URL and token, so `npx localnet-cli …` in the project folder talks to the devnet
// without flags or env.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { P1Error } from './p1-io.ts';

export const DEFAULT_DEVNET_DIR = '.devnet';

export interface DevnetEndpoints {
  chainRpcUrl: string | undefined;
  managerUrl: string | undefined;
  token: string | undefined;
}

const NONE: DevnetEndpoints = { chainRpcUrl: undefined, managerUrl: undefined, token: undefined };

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/**
 * Reads `<dir>/devnet.json`. Without an explicit `dir`, a missing file means "no devnet here"
 * (nothing is taken from it); with one, a missing or malformed file is a `P1Error` naming it.
 */
export function readDevnetEndpoints(dir: string | undefined, cwd: string): DevnetEndpoints {
  const file = join(resolve(cwd, dir ?? DEFAULT_DEVNET_DIR), 'devnet.json');
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
  return {
    chainRpcUrl: text(fields.chainRpcUrl),
    managerUrl: text(fields.managerUrl),
    token: text(fields.token),
  };
}

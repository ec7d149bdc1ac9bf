// What `cluster-manager devnet` passes to its manager from the user's command line and shell. The
// devnet writes the manager's environment itself (manager.env), so a `CM_*` variable exported in
// the shell reached nothing: `CM_HOOKS_FILE=… npm start` ran no hook and said nothing. Now
// CM_HOOKS_FILE is honoured (as `--hooks-file`), and any other `CM_*` variable is refused, named,
// with what to do instead — never silently ignored.
import { resolve } from 'node:path';
import { HooksFileError, loadHooksFile } from '../manager/hooks/hooks-file.ts';

/** The flags of the devnet that map to a manager setting. */
const FLAG_FOR: Readonly<Record<string, string>> = {
  CM_POCKET_V1_TX_MODE: '--tx-mode',
  CM_TX_MODE: '--tx-mode', // its older name
  CM_RPC_PORT: '--rpc-port',
  CM_POCKET_V1_PROFILE: '--fidelity',
  CM_CHAIN_PROFILE: '--fidelity', // its older name
  CM_HOOKS_FILE: '--hooks-file',
};

/** The shell or the flags asked for something the devnet cannot do; the message says what to do. */
export class ManagerSettingsError extends Error {
  override readonly name = 'ManagerSettingsError';
}

export interface ManagerSettings {
  /** Added to the manager's environment (and to manager.env). */
  env: Record<string, string>;
  /** Lines for the devnet's terminal: what was taken from where. */
  notes: string[];
}

/**
 * The manager settings of a devnet started with `--hooks-file` (`flags.hooksFile`, as typed) in
 * a shell with `env`, paths resolved against `cwd`. The hooks file is validated now, as the manager
 * will at its start: a broken file is refused before anything starts, every problem named. With
 * `--no-manager` (`flags.manager` false) exported variables are left alone: the manager of your
 * own that `node --env-file=manager.env … run` starts in that shell reads them (Node lets the
 * environment win over the file).
 */
export function managerSettings(
  flags: { hooksFile: string | undefined; manager: boolean },
  env: NodeJS.ProcessEnv,
  cwd: string,
): ManagerSettings {
  const hooksFlag = flags.hooksFile;
  const exported = Object.keys(env)
    .filter((name) => name.startsWith('CM_') && name !== 'CM_HOOKS_FILE' && env[name] !== '')
    .sort();
  if (flags.manager && exported.length > 0) {
    const flags = exported.flatMap((name) =>
      FLAG_FOR[name] === undefined ? [] : [`${name} → ${FLAG_FOR[name]}`],
    );
    throw new ManagerSettingsError(
      `the devnet writes its manager's environment itself, so ${exported.join(', ')} exported in this shell would reach nothing; unset ${exported.length === 1 ? 'it' : 'them'} (unset ${exported.join(' ')})${flags.length === 0 ? '' : ` and use the devnet's flags (${flags.join(', ')})`}, or start a manager of your own with --no-manager (docs/devnet.md)`,
    );
  }
  const fromEnv = env.CM_HOOKS_FILE === '' ? undefined : env.CM_HOOKS_FILE;
  if (
    hooksFlag !== undefined &&
    fromEnv !== undefined &&
    resolve(cwd, hooksFlag) !== resolve(cwd, fromEnv)
  )
    throw new ManagerSettingsError(
      `--hooks-file ${hooksFlag} and CM_HOOKS_FILE=${fromEnv} name different files; give one`,
    );
  const given = hooksFlag ?? fromEnv;
  if (given === undefined) return { env: {}, notes: [] };
  const path = resolve(cwd, given);
  let count: number;
  try {
    count = loadHooksFile(path).length;
  } catch (error: unknown) {
    if (error instanceof HooksFileError)
      throw new ManagerSettingsError(
        error.message.replace(/:\n\s*- /, ': ').replace(/\n\s*- /g, '; '),
      );
    throw error;
  }
  const source = hooksFlag === undefined ? 'CM_HOOKS_FILE' : '--hooks-file';
  return {
    env: { CM_HOOKS_FILE: path },
    notes: [`hooks: ${count} from ${path} (${source}); the manager runs them (docs/hooks.md)`],
  };
}

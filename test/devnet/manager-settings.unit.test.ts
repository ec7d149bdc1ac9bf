// What `cluster-manager devnet` hands its manager from the flags and the shell: `--hooks-file` or
// CM_HOOKS_FILE (checked before anything starts), and every other CM_* variable refused by name —
// the devnet writes its manager's environment itself, so they used to be ignored in silence.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { managerSettings } from '../../src/devnet/manager-settings.ts';

const work = mkdtempSync(join(tmpdir(), 'manager-settings-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const hook = join(work, 'hook.sh');
writeFileSync(hook, '#!/bin/sh\n');
chmodSync(hook, 0o755);
const good = join(work, 'hooks.yaml');
writeFileSync(good, `hooks:\n  - { name: signed, on: post-stake, command: ['${hook}'] }\n`, {
  mode: 0o600,
});
const managed = (hooksFile?: string) => ({ hooksFile, manager: true });

describe('the manager settings of a devnet', () => {
  it('--hooks-file: the file, absolute, in the manager env, with a line saying so', () => {
    const settings = managerSettings(managed('hooks.yaml'), {}, work);
    expect(settings.env).toEqual({ CM_HOOKS_FILE: good });
    expect(settings.notes).toEqual([
      `hooks: 1 from ${good} (--hooks-file); the manager runs them (docs/hooks.md)`,
    ]);
  });

  it('CM_HOOKS_FILE in the shell is honoured as --hooks-file; the two naming different files are refused', () => {
    expect(managerSettings(managed(), { CM_HOOKS_FILE: good }, '/').env).toEqual({
      CM_HOOKS_FILE: good,
    });
    expect(managerSettings(managed(good), { CM_HOOKS_FILE: good }, '/').env.CM_HOOKS_FILE).toBe(
      good,
    );
    expect(() => managerSettings(managed('other.yaml'), { CM_HOOKS_FILE: good }, work)).toThrow(
      `--hooks-file other.yaml and CM_HOOKS_FILE=${good} name different files; give one`,
    );
  });

  it('a broken hooks file is refused before anything starts, every problem named', () => {
    const broken = join(work, 'broken.yaml');
    writeFileSync(broken, "hooks:\n  - { on: post-stak, command: ['relative'] }\n", {
      mode: 0o600,
    });
    expect(() => managerSettings(managed(broken), {}, '/')).toThrow(
      /^invalid hooks file .*broken\.yaml: hooks\[0\].*unknown hook "post-stak"/,
    );
    const open = join(work, 'open.yaml');
    writeFileSync(open, 'hooks: []\n');
    chmodSync(open, 0o666);
    expect(() => managerSettings(managed(open), {}, '/')).toThrow(/writable by users other/);
    expect(() => managerSettings(managed(join(work, 'none.yaml')), {}, '/')).toThrow(
      /cannot read the file/,
    );
  });

  it('any other CM_* variable is refused, named, with the flag that does it', () => {
    expect(() =>
      managerSettings(managed(), { CM_TX_MODE: 'cli', CM_LOG_LEVEL: 'debug', HOME: '/' }, '/'),
    ).toThrow(
      "the devnet writes its manager's environment itself, so CM_LOG_LEVEL, CM_TX_MODE exported in this shell would reach nothing; unset them (unset CM_LOG_LEVEL CM_TX_MODE) and use the devnet's flags (CM_TX_MODE → --tx-mode), or start a manager of your own with --no-manager (docs/devnet.md)",
    );
    // Empty counts as unset; nothing asked, nothing added.
    expect(managerSettings(managed(), { CM_TX_MODE: '' }, '/')).toEqual({ env: {}, notes: [] });
  });

  it('with --no-manager, exported variables are left to the manager of your own (it reads them)', () => {
    expect(
      managerSettings({ hooksFile: undefined, manager: false }, { CM_LOG_LEVEL: 'debug' }, '/'),
    ).toEqual({ env: {}, notes: [] });
  });
});

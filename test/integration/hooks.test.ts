// Lifecycle hooks on a devnet (emulator, localnet node processes, the manager as a process with
// CM_HOOKS_FILE): a pre-stake hook records the stake, a `block` gate holds it (the reason names the
// gate) until the gate passes, a post-stake hook runs once the validator signs; a pre-unstake gate
// holds the unstake the same way; the manager is SIGKILLed and restarted in between, and no hook
// runs twice; no hook ever sees a key.
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pending, waitFor } from '../../src/harness/index.ts';
import { useDevnet } from './support.ts';

const work = mkdtempSync(join(tmpdir(), 'cm-hooks-files-'));
const LOG = join(work, 'hooks.log');
const ALLOW_STAKE = join(work, 'allow-stake');
const ALLOW_UNSTAKE = join(work, 'allow-unstake');

function script(name: string, body: string): string {
  const path = join(work, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}
const record = script(
  'record.sh',
  'echo "$CM_HOOK_PHASE $CM_HOOK_NAME $CM_VALIDATOR_ID $CM_ACTION_KEY" >> "$LOG"\nenv > "$ENV_DIR/env-$CM_HOOK_NAME-$CM_VALIDATOR_ID"',
);
const gate = script('gate.sh', '[ -e "$ALLOW" ] || { echo "gate $ALLOW closed" >&2; exit 1; }');
const common = { LOG, ENV_DIR: work };
const hooksFile = join(work, 'hooks.json');
writeFileSync(
  hooksFile,
  JSON.stringify({
    hooks: [
      { name: 'record', on: 'pre-stake', command: [record], env: common },
      { name: 'gate', on: 'pre-stake', command: [gate], env: { ALLOW: ALLOW_STAKE } },
      { name: 'signed', on: 'post-stake', command: [record], env: common },
      { name: 'leave-gate', on: 'pre-unstake', command: [gate], env: { ALLOW: ALLOW_UNSTAKE } },
      {
        name: 'left',
        on: 'post-unstake',
        command: [record],
        env: common,
        failurePolicy: 'continue',
      },
    ],
  }),
  { mode: 0o600 },
);

const devnet = useDevnet('hooks', { managerEnv: { CM_HOOKS_FILE: hooksFile } });
afterAll(() => rm(work, { recursive: true, force: true }));

/** The hook runs recorded by record.sh, as "phase name id actionKey". */
function runs(): string[] {
  return existsSync(LOG) ? readFileSync(LOG, 'utf8').trim().split('\n') : [];
}

async function blocks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await devnet.h.triggerView();
}

describe('lifecycle hooks on a devnet', { timeout: 120_000 }, () => {
  it('a failing block pre-stake hook holds the stake, named in the reason, across a SIGKILL of the manager; it stakes once the hook passes', async () => {
    const { h } = devnet;
    // The genesis set signs first (pacing lets no one join a set that has not voted yet).
    for (const id of ['001', '002', '003', '004'])
      await h.waitForValidator(id, (row) => row.phase === 'active', 'active', { drive: true });
    await h.scaleTo(5, { wait: 'none' });
    const held = await h.waitForValidator(
      '005',
      (row) => row.waitingFor === 'hook',
      'held by the gate',
      { timeoutMs: 60_000 },
    );
    expect(held.reason).toMatch(
      /^HOOK_FAILED: stake held by pre-stake hook "gate": exited with 1: gate .* closed/,
    );
    await blocks(3);
    expect(await h.stakedValidators()).toEqual(['001', '002', '003', '004']);
    expect(await h.stakeTransactions('005')).toBe(0);
    expect(runs()).toEqual(['pre-stake record 005 005/stake/after-0']);

    await h.killManager('SIGKILL');
    await h.restartManager();
    await h.waitForValidator(
      '005',
      (row) => row.waitingFor === 'hook',
      'held again after the restart',
      {
        timeoutMs: 60_000,
      },
    );
    await blocks(2);
    expect(await h.stakeTransactions('005')).toBe(0);

    writeFileSync(ALLOW_STAKE, '');
    await h.waitForValidator('005', (row) => row.phase === 'active', 'active', {
      drive: true,
      timeoutMs: 60_000,
    });
    expect(await h.stakeTransactions('005')).toBe(1);
    const stake = (await h.actions()).find((a) => a.validatorId === '005' && a.kind === 'stake');
    await waitFor(() => runs().length === 2 || pending(`hook runs: ${runs().join('; ')}`), {
      what: 'the post-stake hook',
      timeoutMs: 30_000,
    });
    expect(runs()).toEqual([
      'pre-stake record 005 005/stake/after-0',
      `post-stake signed 005 005/stake/${stake?.seq ?? '?'}`,
    ]);
  });

  it('hands each hook the validator id, address, phase and chain URL, and no key', async () => {
    const { h } = devnet;
    const address = (await h.addresses()).get('005');
    for (const name of ['record', 'signed']) {
      const env = readFileSync(join(work, `env-${name}-005`), 'utf8');
      expect(env).toContain('CM_VALIDATOR_ID=005\n');
      expect(env).toContain(`CM_VALIDATOR_ADDRESS=${address ?? '?'}\n`);
      expect(env).toContain(`CM_CHAIN_RPC_URL=${h.info.chainRpcUrl}`);
      expect(env).not.toMatch(/KUBECONFIG|CM_RPC_TOKEN/);
      for (const key of (await h.privateKeys()).values()) {
        expect(env).not.toContain(key);
        expect(env).not.toContain(key.slice(0, 64));
      }
    }
  });

  it('a restarted manager runs nothing twice', async () => {
    const { h } = devnet;
    const before = runs();
    await h.killManager('SIGTERM');
    await h.restartManager();
    await h.waitForValidator('005', (row) => row.phase === 'active', 'active after the restart', {
      drive: true,
    });
    await blocks(3);
    await h.waitForValidator('005', (row) => row.phase === 'active', 'still active', {
      drive: true,
    });
    expect(runs()).toEqual(before);
    expect(await h.stakeTransactions('005')).toBe(1);
  });

  it('a failing block pre-unstake hook holds the unstake, named in the reason, until it passes', async () => {
    const { h } = devnet;
    await h.kubectlScale(4);
    const held = await h.waitForValidator(
      '005',
      (row) => row.waitingFor === 'hook',
      'unstake held by the gate',
      { timeoutMs: 60_000 },
    );
    expect(held.reason).toMatch(/^HOOK_FAILED: unstake held by pre-unstake hook "leave-gate"/);
    await blocks(3);
    expect(await h.stakedValidators()).toContain('005');
    expect(await h.unstakeTransactions('005')).toBe(0);

    writeFileSync(ALLOW_UNSTAKE, '');
    await h.expectInactive('005', { timeoutMs: 60_000 });
    expect(await h.unstakeTransactions('005')).toBe(1);
    const unstake = (await h.actions()).find(
      (a) => a.validatorId === '005' && a.kind === 'unstake',
    );
    await waitFor(() => runs().length === 3 || pending(`hook runs: ${runs().join('; ')}`), {
      what: 'the post-unstake hook',
      timeoutMs: 30_000,
    });
    expect(runs()[2]).toBe(`post-unstake left 005 005/unstake/${unstake?.seq ?? '?'}`);
    expect(await h.stakedValidators()).toEqual(['001', '002', '003', '004']);
  });
});

// Static discovery against `localnet-node net` processes, no Kubernetes at all (issue 18, "Done
// when"): six node processes, four staked at genesis; the manager runs with --discovery static, a
// validators file listing 001–005 and the keys Secret manifest as `keys generate` writes it. 005
// gets staked once and signs; adding 006 to the file stakes it once; removing 005 unstakes it
// once; a half-written validators file, a bad key and a keys file others may read are named
// while the rest keeps working; scale answers 501; a post-stake command hook sees each staked id
// once; and the chain never stalls (read on the chain).
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainLedger } from '../../src/harness/ledger.ts';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { startNet, type LocalNet } from '../../src/localnet/net.ts';
import { PacemakerMode } from '../../src/localnet/pacemaker.ts';
import { parseChainTime } from '../../src/manager/chain/pocket/chain-time.ts';
import { renderKeysSecret } from '../../src/manager/chain/pocket/cli/keys-actions.ts';
import { startService, type RunningService } from '../../src/manager/run.ts';
import { generateKeys, PocketRpcClient } from '../../src/pocket/index.ts';
import { lines, runCli } from '../rpc/support/cli.ts';

const TOKEN = 'static-net-token-0123456789abcdef';
const BLOCK_MS = 500;
const keys = generateKeys({ count: 6, seed: 'static-discovery-net' });
const idOfAddress = new Map([...keys].map(([id, key]) => [key.address, id]));
const idOf = (address: string): string => idOfAddress.get(address) ?? address;

let dir: string;
let net: LocalNet;
let service: RunningService;
let chain: PocketRpcClient;
let ledger: ChainLedger;
const validatorsPath = (): string => join(dir, 'validators.yaml');
const keysPath = (): string => join(dir, 'keys.yaml');

/** Writes a file the way an editor or a deploy tool should: a new file renamed into place. */
function writeAtomic(path: string, text: string, mode = 0o600): void {
  const next = `${path}.next`;
  writeFileSync(next, text, { mode });
  chmodSync(next, mode);
  renameSync(next, path);
}

function validatorsFile(ids: readonly string[]): string {
  const nodes = ids.map((id) => {
    const node = net.nodes.find((n) => n.id === id);
    if (node === undefined) throw new Error(`no node ${id}`);
    return `  - {id: "${id}", rpc: "${node.rpcUrl}", serviceUrl: "${node.serviceUrl}"}`;
  });
  return `validators:\n${nodes.join('\n')}\n`;
}

// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the route's body
async function api<T>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  const response = await fetch(`${service.rpcUrl ?? ''}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
  });
  return { status: response.status, body: (await response.json()) as T };
}

interface Readyz {
  discovery: string;
  synced: boolean;
  informers: { name: string; synced: boolean; lastError: string | null }[];
}

const counts = async (): Promise<Map<string, { stakes: number; unstakes: number }>> =>
  ledger.counts();

/** Waits until `id` signs a certificate at a height after `after`; returns that height. */
async function signsAfter(id: string, after: number, what: string): Promise<number> {
  return waitFor(
    async () => {
      const height = await chain.height();
      for (let h = Math.max(after + 1, height - 3); h <= height; h++)
        if ((await ledger.signers(h)).includes(id)) return h;
      return pending(`${id} not among the signers up to height ${height}`);
    },
    { what, timeoutMs: 60_000, intervalMs: 200 },
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'static-net-'));
  net = await startNet({
    keys,
    validators: 6,
    staked: 4,
    pacemaker: PacemakerMode.auto,
    blockIntervalMs: BLOCK_MS,
    unstakingBlocks: 3,
  });
  chain = new PocketRpcClient({ baseUrl: net.nodes[0]?.rpcUrl ?? '', timeoutMs: 5_000 });
  ledger = new ChainLedger(chain, idOf);
  writeAtomic(keysPath(), renderKeysSecret({ keys, name: 'validators-private-keys' }));
  writeAtomic(validatorsPath(), validatorsFile(['001', '002', '003', '004', '005']), 0o644);
  // A post-stake hook that appends the validator id it is given to a file.
  writeFileSync(join(dir, 'record.sh'), '#!/bin/sh\necho "$CM_VALIDATOR_ID" >> "$OUT"\n', {
    mode: 0o700,
  });
  writeAtomic(
    join(dir, 'hooks.yaml'),
    JSON.stringify({
      hooks: [
        {
          name: 'record',
          on: 'post-stake',
          command: [join(dir, 'record.sh')],
          env: { OUT: join(dir, 'post-stake.txt') },
          failurePolicy: 'continue',
        },
      ],
    }),
  );
  service = await startService({
    // No KUBECONFIG and a HOME without ~/.kube: nothing Kubernetes can be found.
    env: {
      PATH: process.env.PATH,
      HOME: dir,
      CM_DISCOVERY: 'static',
      CM_VALIDATORS_FILE: validatorsPath(),
      CM_KEYS_FILE: keysPath(),
      CM_CHAIN_RPC_URL: net.nodes[0]?.rpcUrl,
      CM_JOURNAL_PATH: join(dir, 'journal.sqlite'),
      CM_RPC_HOST: '127.0.0.1',
      CM_RPC_PORT: '0',
      CM_RPC_TOKEN: TOKEN,
      CM_READY_DEBOUNCE: '300ms',
      CM_HOOKS_FILE: join(dir, 'hooks.yaml'),
      CM_LOG_LEVEL: 'warn',
    },
  });
}, 120_000);

afterAll(async () => {
  await service.stop();
  await net.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('static discovery next to localnet-node net (no Kubernetes)', { timeout: 120_000 }, () => {
  it('stakes 005, listed in the file, once; it signs; the genesis four are left alone', async () => {
    const ready = await api<Readyz>('/readyz');
    expect(ready.body.discovery).toBe('static');
    await waitFor(
      async () => ((await counts()).get('005')?.stakes === 1 ? true : pending('no stake of 005')),
      { what: '005 to be staked', timeoutMs: 60_000, intervalMs: 250 },
    );
    const staked = (await ledger.transactions()).find((t) => t.id === '005');
    await signsAfter('005', staked?.height ?? 0, '005 to sign');
    const all = await counts();
    expect(all.get('005')).toEqual({ stakes: 1, unstakes: 0 });
    for (const id of ['001', '002', '003', '004', '006']) expect(all.get(id)).toBeUndefined();
  });

  it('answers scale with 501 SCALE_UNSUPPORTED', async () => {
    const answer = await api<{ error: { code: string; message: string } }>('/v1/scale', {
      method: 'POST',
      body: JSON.stringify({ replicas: 6 }),
    });
    expect(answer.status).toBe(501);
    expect(answer.body.error.code).toBe('SCALE_UNSUPPORTED');
    expect(answer.body.error.message).toContain(validatorsPath());
  });

  it('stakes 006 once when it is added to the file', async () => {
    writeAtomic(validatorsPath(), validatorsFile(['001', '002', '003', '004', '005', '006']));
    await waitFor(
      async () => ((await counts()).get('006')?.stakes === 1 ? true : pending('no stake of 006')),
      { what: '006 to be staked', timeoutMs: 60_000, intervalMs: 250 },
    );
    const staked = (await ledger.transactions()).find((t) => t.id === '006');
    await signsAfter('006', staked?.height ?? 0, '006 to sign');
    expect((await counts()).get('006')).toEqual({ stakes: 1, unstakes: 0 });
  });

  it('keeps working through a half-written validators file, a bad key and a keys file others may read', async () => {
    const before = await counts();
    // Half-written: cut in the middle of an entry (a plain write, not a rename).
    const whole = validatorsFile(['001', '002', '003', '004', '005', '006']);
    writeFileSync(validatorsPath(), whole.slice(0, whole.length - 30));
    const problem = async (name: string, code: string): Promise<void> => {
      await waitFor(
        async () => {
          const input = (await api<Readyz>('/readyz')).body.informers.find((i) => i.name === name);
          return input?.lastError?.startsWith(code) === true
            ? true
            : pending(`${name}: ${input?.lastError ?? 'no error'}`);
        },
        { what: `${code} on ${name}`, timeoutMs: 20_000, intervalMs: 200 },
      );
    };
    await problem('validators-file', 'VALIDATORS_FILE_INVALID');
    // A bad key for an id with no node, in a keys file that is otherwise fine.
    const good = renderKeysSecret({ keys, name: 'validators-private-keys' });
    writeAtomic(keysPath(), `${good}  "007": not-a-key\n`);
    await waitFor(
      async () => {
        const metrics = await fetch(`${service.rpcUrl ?? ''}/metrics`).then((r) => r.text());
        return /^cluster_manager_key_problems 1$/m.test(metrics) ? true : pending('no key problem');
      },
      { what: 'the bad key of 007 to be counted', timeoutMs: 20_000, intervalMs: 200 },
    );
    chmodSync(keysPath(), 0o644);
    await problem('keys-file', 'KEYS_FILE_INSECURE');
    // `status` and `plan` name both problems, not only /readyz and the log.
    const cli = {
      env: { CLUSTER_MANAGER_URL: service.rpcUrl ?? '', CLUSTER_MANAGER_TOKEN: TOKEN },
    };
    for (const command of ['status', 'plan']) {
      const shown = await runCli([command], cli);
      expect(shown.code, shown.stderr).toBe(0);
      const problems = lines(shown.stdout).filter((l) => l.startsWith('problem: '));
      expect(problems, command).toEqual([
        expect.stringMatching(
          /^problem: validators-file: VALIDATORS_FILE_INVALID: .* \(the last good version stays in force\)$/,
        ),
        expect.stringMatching(
          /^problem: keys-file: KEYS_FILE_INSECURE: .* \(the last good version stays in force\)$/,
        ),
      ]);
    }
    const json = JSON.parse((await runCli(['status', '--json'], cli)).stdout) as Readyz;
    expect(json.informers.map((i) => [i.name, i.lastError?.split(':')[0]])).toEqual([
      ['validators-file', 'VALIDATORS_FILE_INVALID'],
      ['keys-file', 'KEYS_FILE_INSECURE'],
    ]);
    const metrics = await fetch(`${service.rpcUrl ?? ''}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/^cluster_manager_discovery_file_problems\{file="keys-file"\} 1$/m);
    expect(metrics).toMatch(
      /^cluster_manager_discovery_file_problems\{file="validators-file"\} 1$/m,
    );
    // The rest keeps working: the chain goes on, 005 and 006 keep signing, nothing is unstaked.
    const height = await chain.height();
    await signsAfter('005', height + 2, '005 to go on signing');
    await signsAfter('006', height + 2, '006 to go on signing');
    expect(await counts()).toEqual(before);
    // Fixed: both problems clear.
    chmodSync(keysPath(), 0o600);
    writeAtomic(validatorsPath(), whole);
    await waitFor(
      async () => {
        const inputs = (await api<Readyz>('/readyz')).body.informers;
        return inputs.every((i) => i.lastError === null) ? true : pending(JSON.stringify(inputs));
      },
      { what: 'both files to be usable again', timeoutMs: 20_000, intervalMs: 200 },
    );
  });

  it('unstakes 005 once when it is removed from the file; it stops signing', async () => {
    writeAtomic(validatorsPath(), validatorsFile(['001', '002', '003', '004', '006']));
    await waitFor(
      async () =>
        (await counts()).get('005')?.unstakes === 1 ? true : pending('no unstake of 005'),
      { what: '005 to be unstaked', timeoutMs: 60_000, intervalMs: 250 },
    );
    const unstake = (await ledger.transactions()).find(
      (t) => t.id === '005' && t.type === 'MessageUnstake',
    );
    const at = unstake?.height ?? 0;
    await waitFor(
      async () => ((await chain.height()) >= at + 4 ? true : pending('chain below unstake + 4')),
      { what: 'four more blocks', timeoutMs: 30_000, intervalMs: 200 },
    );
    for (let h = at + 2; h <= at + 4; h++) expect(await ledger.signers(h)).not.toContain('005');
    const all = await counts();
    expect(all.get('005')).toEqual({ stakes: 1, unstakes: 1 });
    expect(all.get('006')).toEqual({ stakes: 1, unstakes: 0 });
    for (const id of ['001', '002', '003', '004']) expect(all.get(id)).toBeUndefined();
  });

  it('ran the post-stake hook once for each stake, with the id in its environment', async () => {
    const recorded = (): string[] => {
      const path = join(dir, 'post-stake.txt');
      return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n') : [];
    };
    await waitFor(() => (recorded().length >= 2 ? true : pending(recorded().join(','))), {
      what: 'post-stake hooks of 005 and 006',
      timeoutMs: 20_000,
      intervalMs: 200,
    });
    expect(recorded().sort()).toEqual(['005', '006']);
  });

  it('never stalled the chain: every height committed, no gap between blocks above 10 s', async () => {
    const height = await chain.height();
    const blocks = await ledger.blocks(1, height);
    expect(blocks.map((b) => b.block_header.height)).toEqual(
      Array.from({ length: height }, (_, i) => i + 1),
    );
    const times = blocks.map((b) => parseChainTime(b.block_header.timestamp) ?? Number.NaN);
    const gaps = times.slice(1).map((t, i) => t - (times[i] ?? t));
    expect(gaps.every((gap) => Number.isFinite(gap))).toBe(true);
    expect(Math.max(...gaps)).toBeLessThan(10_000);
  });
});

// End to end: a real devnet (Kubernetes API emulator, localnet node processes, the manager as a
// child process) driven through the `cluster-manager` CLI the way a developer drives it. What
// counts is on chain: who signed which committed block's certificate, which block carried the
// unstakes, and when the pods got their deletion timestamp.
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreEvent } from '../../src/kube-emulator/index.ts';
import { Harness } from '../../src/harness/harness.ts';
import { kubectlVersions, runKubectl } from '../../src/harness/kubectl.ts';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { BIN } from '../../src/devnet/devnet.ts';
import { readyHints } from '../../src/devnet/hints.ts';
import { BIN as CLI, lines, runCli, startCli } from '../rpc/support/cli.ts';

const GENESIS = ['001', '002', '003', '004'];
/** A kubectl that sends built-in kinds as protobuf (1.32 and newer), if the machine has one. */
const protobufKubectl = kubectlVersions().find((binary) => binary.minor >= 32);
if (protobufKubectl === undefined)
  console.warn('the kubectl create secret test is skipped: no kubectl 1.32 or newer here');
/** tmux, for the test of a real 80-column terminal (Debian's `tmux`). */
const noTmux = spawnSync('tmux', ['-V']).status !== 0;
if (noTmux) console.warn('the 80-column terminal test is skipped: tmux is not installed');
/** The folder a developer works in; the devnet is its `.devnet`, and nothing is exported. */
let root: string;
let net: Harness;
const at = (): { cwd: string } => ({ cwd: root });

/** The first height whose block carries a `type` transaction signed by `id`, from `from` on. */
async function txHeight(id: string, type: string, from = 1): Promise<number | undefined> {
  const address = (await net.addresses()).get(id);
  const latest = await net.height();
  for (let h = from; h <= latest; h++)
    if (
      (await net.block(h)).transactions?.some(
        (t) => t.signer_addr === address && t.message_type === type,
      )
    )
      return h;
  return undefined;
}

/** Heights from `from` to the latest whose certificate carries `id`'s signature. */
async function signedSince(id: string, from: number): Promise<number[]> {
  const latest = await net.height();
  const heights: number[] = [];
  for (let h = Math.max(1, from); h <= latest; h++)
    if ((await net.activeValidators(h)).includes(id)) heights.push(h);
  return heights;
}

/** Commits one block through the full node and answers once it is committed there. */
async function commitOne(): Promise<number> {
  const response = await fetch(`${net.info.chainRpcUrl}/v1/debug/trigger_view?wait=true`, {
    method: 'POST',
    // JSON: the node refuses any other body on its debug routes (a `text/plain` one is what a
    // web page can send; docs/localnet-node.md, "Debug actions and browsers").
    headers: { 'content-type': 'application/json' },
    body: '{}',
    signal: AbortSignal.timeout(15_000),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { height: number }).height;
}

/** The validator StatefulSet's replicas as the API server holds them. */
async function replicas(): Promise<number | undefined> {
  const sts = await net.apps.readNamespacedStatefulSet({
    name: net.info.statefulSet,
    namespace: net.info.namespace,
  });
  return sts.spec?.replicas;
}

async function managerHeight(): Promise<number> {
  return (await net.manager<{ chain: { height: number } }>('/readyz')).chain.height;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'devnet-cli-'));
  // Six keys in the Secret: a seventh validator has none, so its node cannot start.
  net = await Harness.start({
    dir: join(root, '.devnet'),
    validators: 4,
    keys: 6,
    pacemaker: 'manual',
    managerEnv: { CM_READY_DEBOUNCE: '500ms' },
  });
}, 90_000);

afterAll(async () => {
  await net.stop();
  await rm(root, { recursive: true, force: true });
});

/** Runs a hint line as printed (`npx cluster-manager …` is this repo's binary). */
function runHint(line: string) {
  const words = line.split(' ');
  expect(words.slice(0, 2)).toEqual(['npx', 'cluster-manager']);
  return runCli(words.slice(2), { ...at(), timeoutMs: 180_000 });
}

describe('a developer scaling the devnet with the CLI, nothing exported', () => {
  it('`scale 5 --wait active` typed in a folder below the project finds its .devnet upward, as git finds .git', async () => {
    const below = join(root, 'sub', 'dir');
    await mkdir(below, { recursive: true });
    const result = await runCli(['scale', '5', '--wait', 'active', '--drive'], {
      cwd: below,
      timeoutMs: 180_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(lines(result.stderr).at(-1)).toMatch(/^validator: 4 → 5; done in /);
    expect(await net.stakedValidators()).toEqual([...GENESIS, '005']);
    const staked = await txHeight('005', 'MessageStake');
    expect((await signedSince('005', staked! + 1)).length).toBeGreaterThan(0);
    // The devnet's hints, for a shell down there, need no --devnet either.
    const hints = readyHints(net.info, below, {
      node: process.execPath,
      entry: BIN.clusterManager,
    });
    expect(hints[1]).toBe('npx cluster-manager status');
  });

  it("the devnet's hint `scale 6 --wait active --drive` works as printed, and each of the 6 has signed a certificate since its stake", async () => {
    const hints = readyHints(net.info, root, { node: process.execPath, entry: BIN.clusterManager });
    expect(hints[0]).toBe('npx cluster-manager scale 6 --wait active --drive');
    const result = await runHint(hints[0]!);
    expect(result.code, result.stderr).toBe(0);
    expect(lines(result.stderr).at(-1)).toMatch(/^validator: 5 → 6; done in /);
    expect(await net.stakedValidators()).toEqual([...GENESIS, '005', '006']);
    for (const id of ['005', '006']) {
      const staked = await txHeight(id, 'MessageStake');
      expect(staked, `stake of ${id}`).toBeDefined();
      expect(
        (await signedSince(id, staked! + 1)).length,
        `${id} signed after ${staked}`,
      ).toBeGreaterThan(0);
    }
    for (const id of GENESIS) expect((await signedSince(id, 1)).length, id).toBeGreaterThan(0);
  });

  it('`status --json` agrees with the chain', async () => {
    const height = await net.height();
    await waitFor(async () => ((await managerHeight()) >= height ? true : pending('behind')), {
      what: 'the manager to have read the latest block',
    });
    const result = await runCli(['status', '--json'], at());
    expect(result.code).toBe(0);
    const { validators } = JSON.parse(result.stdout) as {
      validators: {
        id: string | null;
        address: string;
        phase: string;
        wanted: boolean;
        chain: { status: string; stakedAmount: string | null };
      }[];
    };
    const rows = new Map((await net.chain.validators()).map((r) => [r.address, r]));
    const managed = validators.filter((v) => v.id !== null);
    expect(managed.map((v) => v.id)).toEqual([...GENESIS, '005', '006']);
    for (const v of managed) {
      const row = rows.get(v.address);
      expect(row, v.id!).toBeDefined();
      expect(v.chain.status).toBe(row!.unstaking_height < 0 ? 'staked' : 'unstaking');
      expect(v.chain.stakedAmount).toBe(row!.staked_amount);
      // Active in the status means: signed a committed certificate since its stake.
      const since = (await txHeight(v.id!, 'MessageStake')) ?? 0;
      expect(v.phase === 'active', v.id!).toBe((await signedSince(v.id!, since + 1)).length > 0);
      expect(v.wanted).toBe(true);
    }
    expect(validators.filter((v) => v.id === null)).toEqual([]);
  });

  it("`scale 7` to an id holding a staked validator's key is refused before anything changes (its node would sign as 002 a second time)", async () => {
    const keys = await net.privateKeys();
    await net.patchKeys({ '007': keys.get('002') ?? '' });
    try {
      // The manager has read the Secret once its problem gauge counts 002 and 007.
      await waitFor(
        async () =>
          (await net.metric('cluster_manager_key_problems')) === 2 || pending('not seen yet'),
        { what: "the manager to see 007 share 002's key", timeoutMs: 20_000, intervalMs: 100 },
      );
      const refused = await runCli(['scale', '7', '--wait', 'active'], at());
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        'error: KEY_DUPLICATE: cannot scale to 7: no usable key in the keys Secret for 007 (KEY_DUPLICATE: is the same key as "002";',
      );
      expect(await replicas()).toBe(6);
      const pods = await net.core.listNamespacedPod({ namespace: net.info.namespace });
      expect(pods.items.map((p) => p.metadata?.name)).not.toContain('validator-6');
    } finally {
      await net.patchKeys({ '007': null });
    }
  });

  it('`scale 7 --wait active` fails at once naming 007 and its missing key, not after its timeout', async () => {
    // Asked plainly, a scale to an id with no key is refused before anything changes.
    const refused = await runCli(['scale', '7', '--wait', 'active'], at());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'error: KEY_MISSING: cannot scale to 7: no key in the keys Secret for 007;',
    );
    expect(await replicas()).toBe(6);
    // Forced, the wait still ends at once, naming 007 and its missing key.
    const started = performance.now();
    const result = await runCli(
      ['scale', '7', '--wait', 'active', '--timeout', '120', '--force'],
      at(),
    );
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(result.code).toBe(1);
    const errors = lines(result.stderr).filter((l) => l.startsWith('error:'));
    expect(errors).toEqual([
      'error: SCALE_BLOCKED: validator is set to 7 replicas, but the wait cannot end: 007 is failed: KEY_MISSING: no key "007" in the keys Secret',
    ]);
    expect(result.stderr).toContain('follow it: npx cluster-manager watch');
    // Its node process runs and fails (no key file for 007 in the mounted Secret): never Ready.
    await waitFor(
      async () => {
        const pod = await net.core.readNamespacedPod({
          name: 'validator-6',
          namespace: net.info.namespace,
        });
        const ready = pod.status?.conditions?.find((c) => c.type === 'Ready')?.status;
        expect(ready).not.toBe('True');
        const container = pod.status?.containerStatuses?.[0];
        return (
          (container?.restartCount ?? 0) > 0 ||
          container?.lastState?.terminated !== undefined ||
          container?.state?.terminated !== undefined ||
          pending(JSON.stringify(container?.state))
        );
      },
      { what: "007's node to fail", timeoutMs: 30_000 },
    );
    expect(await net.stakedValidators()).toEqual([...GENESIS, '005', '006']);
  });

  it("`logs 005` prints validator 005's node log through the Kubernetes API (pods/log)", async () => {
    const result = await runCli(['logs', '005', '--tail', '5'], at());
    expect(result.code, result.stderr).toBe(0);
    const logged = lines(result.stdout);
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.length).toBeLessThanOrEqual(5);
    // The same lines kubectl's request gets from the API server.
    const direct = await net.core.readNamespacedPodLog({
      name: 'validator-4',
      namespace: net.info.namespace,
      tailLines: 5,
    });
    expect(result.stdout).toBe(direct);
    // --pretty: the same lines, readable: time, level, message, fields.
    const pretty = await runCli(['logs', '005', '--tail', '5', '--pretty'], at());
    expect(pretty.code, pretty.stderr).toBe(0);
    expect(lines(pretty.stdout)).toHaveLength(logged.length);
    for (const line of lines(pretty.stdout))
      expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) \S/);
    const unknown = await runCli(['logs', 'validator-99'], at());
    expect(unknown.code).toBe(1);
    expect(lines(unknown.stderr)).toEqual([
      expect.stringMatching(
        /^error: cannot read the log of pod validator-99 in namespace devnet: .*not found/,
      ),
    ]);
  });

  it('`logs 005 -f` follows: a block committed meanwhile shows up; Ctrl-C ends it with 0', async () => {
    const follow = startCli(['logs', '005', '-f', '--tail', '1'], at());
    try {
      await waitFor(
        () => (lines(follow.stdout).length >= 1 ? true : pending(`no line yet: ${follow.stderr}`)),
        { what: 'the first line', timeoutMs: 30_000 },
      );
      const height = await commitOne();
      await waitFor(
        () =>
          follow.stdout.includes(`"height":${height}`) ? true : pending(follow.stdout.slice(-300)),
        { what: `height ${height} in 005's followed log`, timeoutMs: 30_000 },
      );
    } finally {
      follow.child.kill('SIGINT');
    }
    const result = await follow.exited;
    expect([result.code, result.stderr]).toEqual([0, '']);
  });

  it('`devnet env` prints export lines that another shell can use, from any folder', async () => {
    const env = await runCli(['devnet', 'env', '--dir', join(root, '.devnet')]);
    expect(env.code, env.stderr).toBe(0);
    expect(lines(env.stdout).map((l) => l.split('=')[0])).toEqual([
      'export CLUSTER_MANAGER_URL',
      'export CLUSTER_MANAGER_TOKEN',
      'export KUBECONFIG',
      'export POCKET_REMOTE_CLI_URL',
    ]);
    // A shell that evaluates them reaches the manager (a mutation: the token works) from /.
    const shell = spawnSync(
      'sh',
      [
        '-c',
        `eval "$("$0" "$1" devnet env --dir "$2")" && "$0" "$1" trigger-view`,
        process.execPath,
        BIN.clusterManager,
        join(root, '.devnet'),
      ],
      { cwd: '/', env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8', timeout: 60_000 },
    );
    expect(shell.status, shell.stderr).toBe(0);
    expect(shell.stdout).toMatch(/^height \d+\n$/);
  });

  it('`scale 3 --wait active` drains first: the unstakes commit before any pod gets a deletion timestamp', async () => {
    const leaving = ['validator-3', 'validator-4', 'validator-5', 'validator-6'];
    // Exact moments, from the emulator's own store (in this process): when each leaving pod was
    // first written with a deletionTimestamp (or deleted).
    const deletedAt = new Map<string, number>();
    const unsubscribe = net.devnet!.emulator.store.subscribe((event: StoreEvent) => {
      const name = event.object.metadata.name ?? '';
      if (!event.storage.endsWith('pods') || !leaving.includes(name) || deletedAt.has(name)) return;
      if (event.type === 'DELETED' || event.object.metadata.deletionTimestamp !== undefined)
        deletedAt.set(name, performance.now());
    });
    // When each height was known committed on the full node the manager reads.
    const committedAt = new Map<number, number>();
    const start = await net.height();
    // Without --force the drain is refused at once, naming the validator it cannot judge.
    const refused = await runCli(['scale', '3', '--wait', 'active', '--timeout', '60'], at());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/KEY_MISSING.*007/s);
    try {
      // No --drive: this test commits the blocks, one at a time. --force: 007 has no key, so the
      // manager cannot tell whether it is staked and refuses a drain past it otherwise
      // (KEY_MISSING, docs/operations.md "What the manager will refuse and why").
      const scale = startCli(
        ['scale', '3', '--wait', 'active', '--timeout', '60', '--force'],
        at(),
      );
      let exited = false;
      void scale.exited.then(() => (exited = true));
      while (!exited) {
        const seenBefore = await managerHeight();
        const height = await commitOne();
        committedAt.set(height, performance.now());
        await waitFor(
          async () => ((await managerHeight()) >= height || exited ? true : pending('behind')),
          {
            what: `the manager to read height ${height} (it had ${seenBefore})`,
          },
        );
      }
      const result = await scale.exited;
      expect(result.code, result.stderr).toBe(0);
      expect(lines(result.stderr).at(-1)).toMatch(
        /^validator: 7 → 3, drained 004, 005, 006, 007; done/,
      );
      await waitFor(
        () => (deletedAt.size === leaving.length ? true : pending([...deletedAt.keys()].join(','))),
        {
          what: 'every leaving pod to get a deletion timestamp',
        },
      );
    } finally {
      unsubscribe();
    }

    const unstakes = await Promise.all(
      ['004', '005', '006'].map((id) => txHeight(id, 'MessageUnstake', start)),
    );
    expect(unstakes.every((h) => h !== undefined)).toBe(true);
    const removal = Math.max(...(unstakes as number[]));
    const removalCommitted = committedAt.get(removal);
    expect(removalCommitted, `height ${removal} committed by this test`).toBeDefined();
    for (const [pod, at] of deletedAt)
      expect(
        at,
        `${pod} deleted ${(at - removalCommitted!).toFixed(0)} ms after block ${removal}`,
      ).toBeGreaterThan(removalCommitted!);

    // From the next height on, the certificates carry exactly the three that stay, and blocks
    // keep committing with them.
    for (let i = 0; i < 3; i++) await commitOne();
    const latest = await net.height();
    expect(latest).toBeGreaterThanOrEqual(removal + 3);
    for (let h = removal + 1; h <= latest; h++)
      expect(await net.activeValidators(h), `height ${h}`).toEqual(['001', '002', '003']);
    expect(await net.stakedValidators()).toEqual(['001', '002', '003']);

    // `logs 005` now: its pod is gone, and the error says so, with where its log stayed.
    await waitFor(
      async () =>
        (await net.core
          .readNamespacedPod({ name: 'validator-4', namespace: net.info.namespace })
          .then(() => false)
          .catch(() => true)) || pending('pod validator-4 still there'),
      { what: 'pod validator-4 to be gone' },
    );
    const gone = await runCli(['logs', '005'], at());
    expect(gone.code).toBe(1);
    expect(lines(gone.stderr)).toEqual([
      expect.stringMatching(
        /^error: cannot read the log of pod validator-4 in namespace devnet: .*not found \(validator 005 has no pod now; its node's last log is in \/.*\/emulator\/logs\/devnet_validator-4\.log\)$/,
      ),
    ]);
  });

  it.skipIf(protobufKubectl === undefined)(
    'the keys Secret recreated with `kubectl create secret generic --from-file` (1.32+: a protobuf body) is what the manager uses: scale 4 stakes 004 again',
    async () => {
      const namespace = net.info.namespace;
      const name = 'validators-private-keys';
      const secret = await net.core.readNamespacedSecret({ name, namespace });
      const ids = Object.keys(secret.data ?? {}).sort();
      expect(ids).toEqual(['001', '002', '003', '004', '005', '006']);
      // The devnet's throwaway keys, one file each (as an operator keeps them), removed below.
      const dir = await mkdtemp(join(tmpdir(), 'devnet-keys-'));
      const options = {
        kubeconfig: net.info.kubeconfig,
        cacheDir: join(dir, 'cache'),
        home: dir,
        binary: protobufKubectl!,
      };
      try {
        for (const id of ids)
          await writeFile(join(dir, id), Buffer.from(secret.data![id]!, 'base64'), { mode: 0o600 });
        const deleted = await runKubectl(['-n', namespace, 'delete', 'secret', name], options);
        expect(deleted.code, deleted.stderr).toBe(0);
        await net.waitForValidator(
          '001',
          (row) => row.reason.includes('KEY_MISSING'),
          'the manager to see the keys gone',
        );
        const created = await runKubectl(
          [
            '-n',
            namespace,
            'create',
            'secret',
            'generic',
            name,
            ...ids.map((id) => `--from-file=${id}=${join(dir, id)}`),
          ],
          options,
        );
        expect(created.code, created.stderr).toBe(0);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      await net.waitForValidator(
        '001',
        (row) => !row.reason.includes('KEY_MISSING'),
        'the manager to read the recreated keys',
      );
      const result = await runCli(
        ['scale', '4', '--wait', 'active', '--drive', '--timeout', '90'],
        at(),
      );
      expect(result.code, result.stderr).toBe(0);
      expect(await net.stakedValidators()).toEqual(GENESIS);
      const restaked = await txHeight(
        '004',
        'MessageStake',
        (await txHeight('004', 'MessageUnstake')) ?? 1,
      );
      expect(restaked, 'the stake of 004 after its unstake').toBeDefined();
    },
  );

  it.skipIf(noTmux)(
    'in a real terminal (tmux) narrowed from 120 to 80 columns while it waits, `scale 6 --wait active` ends with each validator on one line, none over 80 columns',
    async () => {
      // A tmux server of this test's own (its socket), so no other session is touched.
      const socket = `cm-devnet-cli-${process.pid}`;
      const tmux = (...args: string[]): string => {
        const run = spawnSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
        expect(run.status, run.stderr).toBe(0);
        return run.stdout;
      };
      // -J: a line the terminal wrapped comes back whole (a row over 80 columns shows as such).
      const pane = (): string[] =>
        tmux('capture-pane', '-p', '-J', '-t', 'scale')
          .split('\n')
          .map((line) => line.trimEnd());
      try {
        tmux('new-session', '-d', '-s', 'scale', '-x', '120', '-y', '40', '-c', root);
        tmux('set-option', '-t', 'scale', 'remain-on-exit', 'on');
        // No --drive: the test makes the blocks, once the window is narrowed under the table.
        tmux(
          'send-keys',
          '-t',
          'scale',
          `clear; '${process.execPath}' '${CLI.clusterManager}' scale 6 --wait active --timeout 120; echo EXIT=$?`,
          'Enter',
        );
        // The progress is drawn (no block is made before the resize, so the scale cannot end).
        await waitFor(() => pane().some((l) => /^00[56] /.test(l)) || pending(pane().join('\n')), {
          what: 'the progress of 005 and 006 on screen',
          timeoutMs: 30_000,
        });
        tmux('resize-window', '-t', 'scale', '-x', '80', '-y', '40');
        await waitFor(
          async () => {
            if (pane().some((l) => l.startsWith('EXIT='))) return true;
            await commitOne();
            return pending(pane().join('\n'));
          },
          { what: 'the scale to end', timeoutMs: 150_000, intervalMs: 200 },
        );
        const screen = pane().filter((l) => l !== '');
        expect(
          screen.filter((l) => [...l].length > 80),
          `lines over 80 columns (a wrapped row comes back whole) on:\n${screen.join('\n')}`,
        ).toEqual([]);
        expect(screen.filter((l) => l.startsWith('EXIT='))).toEqual(['EXIT=0']);
        // One header, drawn for 80 columns: the steps left out for the reasons' room.
        expect(
          screen.filter((l) => l.startsWith('ID ')),
          screen.join('\n'),
        ).toEqual([expect.stringMatching(/^ID +POD +PHASE +REASON$/)]);
        for (const id of ['001', '002', '003', '004', '005', '006'])
          expect(
            screen.filter((l) => l.startsWith(`${id}  `)),
            `${id}'s rows (more than one: an old drawing left on screen):\n${screen.join('\n')}`,
          ).toHaveLength(1);
        expect(await net.stakedValidators()).toEqual([...GENESIS, '005', '006']);
      } finally {
        spawnSync('tmux', ['-L', socket, 'kill-server']);
      }
    },
    200_000,
  );
});

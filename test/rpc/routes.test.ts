// The control RPC through inject() against a real manager: the Kubernetes API emulator over HTTP
// and two in-process localnet nodes. Effects are checked where they land — the StatefulSet's
// replicas, the journal, and the chain's blocks — not only in status codes. Refusals that need
// no manager (400 bodies and queries, 401, 404, 500, the mapping of errors to statuses) are unit
// tests with a fake control plane: routes.unit.test.ts and test/property/control-rpc.unit.test.ts.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusedPort } from '../support/owned-ports.ts';
import { ErrorCatalogue } from '../../src/manager/errors.ts';
import { kubernetesOf } from '../../src/manager/compose.ts';
import { Phase } from '../../src/manager/planner/plan.ts';
import { pending, waitFor } from '../../src/harness/wait.ts';
import {
  kubectlScale,
  startControlFixture,
  STATEFULSET,
  TOKEN,
  validatorStatefulSet,
  type ControlFixture,
  type ManagerUnderTest,
} from './support/control-fixture.ts';

const auth = { authorization: `Bearer ${TOKEN}` };
let fixture: ControlFixture;
let m: ManagerUnderTest;

interface ErrorBody {
  error: { code: keyof typeof ErrorCatalogue; message: string };
}
interface ValidatorBody {
  id: string | null;
  address: string | null;
  pod: string | null;
  ready: boolean;
  wanted: boolean;
  phase: string;
  reason: string;
  chain: { status: string; stakedAmount: string | null; unstakingHeight: number | null };
  lastAction: { kind: string; state: string; seq: number } | null;
}

// The callers name the body type they expect from the route's schema.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
async function get<T>(url: string): Promise<{ status: number; body: T }> {
  const response = await m.app.inject({ method: 'GET', url, headers: auth });
  return { status: response.statusCode, body: response.json<T>() };
}

// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
async function post<T>(
  url: string,
  payload?: unknown,
  headers: Record<string, string> = auth,
): Promise<{ status: number; body: T }> {
  const response = await m.app.inject({
    method: 'POST',
    url,
    headers,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });
  return { status: response.statusCode, body: response.json<T>() };
}

/** POST /v1/scale that answers once the target holds (`wait: active`), driving the chain. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
function scaleActive<T>(replicas: number): Promise<{ status: number; body: T }> {
  return post<T>('/v1/scale', { replicas, wait: 'active', drive: true, timeoutSeconds: 60 });
}

async function validator(id: string): Promise<ValidatorBody> {
  const { body } = await get<{ validators: ValidatorBody[] }>('/v1/validators');
  const found = body.validators.find((v) => v.id === id);
  if (found === undefined) throw new Error(`no validator ${id} in /v1/validators`);
  return found;
}

/** Heights whose certificate carries `address`, scanning `from`…latest. */
async function signedAt(address: string, from: number): Promise<number[]> {
  const latest = await fixture.chain.height();
  const heights: number[] = [];
  for (let h = Math.max(1, from); h <= latest; h++) {
    const block = await fixture.chain.block(h);
    if (block.block_header.quorum_cert.threshold_sig.signatures?.some((s) => s.address === address))
      heights.push(h);
  }
  return heights;
}

/** Height of the block that committed a transaction of `type` signed by `address`. */
async function committedTx(address: string, type: string, from = 1): Promise<number | undefined> {
  const latest = await fixture.chain.height();
  for (let h = from; h <= latest; h++) {
    const block = await fixture.chain.block(h);
    if (block.transactions?.some((t) => t.signer_addr === address && t.message_type === type))
      return h;
  }
  return undefined;
}

const journalSize = (): number => m.manager.book.journal.count();
const address = (id: string): string => fixture.keys.get(id)!.address;

beforeAll(async () => {
  fixture = await startControlFixture();
  m = await fixture.startManager();
  await waitFor(() => (m.manager.isReady() ? true : pending('not ready')), {
    what: 'the manager to be ready',
  });
});

afterAll(async () => {
  await fixture.stop();
});

describe('health', () => {
  it('GET /readyz answers 200 once caches are synced, the chain answered and the queue runs', async () => {
    const { status, body } = await get<{
      ready: boolean;
      synced: boolean;
      chain: { healthy: boolean };
      informers: { synced: boolean }[];
    }>('/readyz');
    expect(status).toBe(200);
    expect(body.ready && body.synced && body.chain.healthy).toBe(true);
    expect(body.informers.map((i) => i.synced)).toEqual([true, true, true]);
  });

  it('GET /metrics exposes desired, staked and active validators, actions, durations, queue, sync, height and informer restarts', async () => {
    await fixture.commitBlock();
    await waitFor(
      async () => ((await validator('001')).phase === 'active' ? true : pending('not active')),
      {
        what: '001 to sign a block',
      },
    );
    const response = await m.app.inject({ url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain');
    const text = response.body;
    const value = (series: string): number => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      if (line === undefined) throw new Error(`no series ${series}`);
      return Number(line.slice(series.length + 1));
    };
    expect(value('cluster_manager_validators{view="desired"}')).toBe(1);
    expect(value('cluster_manager_validators{view="staked"}')).toBe(1);
    expect(value('cluster_manager_validators{view="active"}')).toBe(1);
    expect(value('cluster_manager_chain_height')).toBe(await fixture.chain.height());
    expect(value('cluster_manager_queue_depth')).toBeGreaterThanOrEqual(0);
    expect(
      Math.abs(value('cluster_manager_last_successful_sync_timestamp_seconds') - Date.now() / 1000),
    ).toBeLessThan(5);
    expect(value('cluster_manager_reconcile_duration_seconds_count')).toBeGreaterThan(0);
    for (const name of [
      'cluster_manager_actions_total',
      'cluster_manager_informer_restarts_total',
      'cluster_manager_validator_phase',
    ])
      expect(text).toContain(`# TYPE ${name}`);
  });

  it('GET /readyz answers 503 once the work queue no longer runs', async () => {
    const other = await fixture.startManager({ CM_NAMESPACE: 'kube-public' });
    try {
      await waitFor(
        async () =>
          (await other.app.inject({ url: '/readyz' })).statusCode === 200
            ? true
            : pending('not ready'),
        {
          what: 'the second manager to be ready',
        },
      );
      await other.manager.stop();
      const response = await other.app.inject({ url: '/readyz' });
      expect(response.statusCode).toBe(503);
      expect(response.json<{ ready: boolean }>().ready).toBe(false);
    } finally {
      await other.stop();
    }
  });

  it('GET /readyz answers 503 while the chain has never answered', async () => {
    const dead = await refusedPort();
    const other = await fixture.startManager({
      CM_NAMESPACE: 'kube-public',
      CM_CHAIN_RPC_URL: `http://127.0.0.1:${dead.port}`,
    });
    try {
      const response = await other.app.inject({ url: '/readyz' });
      expect(response.statusCode).toBe(503);
      const body = response.json<{ ready: boolean; chain: { healthy: boolean } }>();
      expect(body.ready).toBe(false);
      expect(body.chain.healthy).toBe(false);
    } finally {
      await other.stop();
      await dead.release();
    }
  });
});

describe('reads', () => {
  it('GET /v1/validators shows each validator with pod, readiness, wanted, address, chain row, phase and reason', async () => {
    const v = await validator('001');
    expect(v).toMatchObject({
      id: '001',
      address: address('001'),
      pod: `${STATEFULSET}-0`,
      ready: true,
      wanted: true,
      phase: 'active',
      chain: { status: 'staked', stakedAmount: '1000000000000', unstakingHeight: null },
      lastAction: null,
    });
    expect(v.reason).toMatch(/signing/);
  });

  it('GET /v1/plan shows what the planner would do now, with reasons, and does none of it', async () => {
    const before = journalSize();
    expect((await post('/v1/pause')).status).toBe(200);
    try {
      await kubectlScale(fixture, 2);
      await waitFor(
        async () => {
          const { body } = await get<{
            paused: boolean;
            actions: { id: string; action: string; waitingFor: string | null; reason: string }[];
          }>('/v1/plan');
          const stake = body.actions.find((a) => a.id === '002');
          return stake?.waitingFor === 'paused' ? true : pending(JSON.stringify(body));
        },
        { what: 'the plan to stake 002 once resumed' },
      );
      const { status, body } = await get<{
        paused: boolean;
        height: number;
        actions: { id: string; action: string; reason: string }[];
      }>('/v1/plan');
      expect(status).toBe(200);
      expect(body.paused).toBe(true);
      expect(body.actions).toEqual([
        expect.objectContaining({
          id: '002',
          action: 'stake',
          reason: expect.stringMatching(/pod validator-1 is Ready/) as unknown,
        }),
      ]);
      expect(journalSize()).toBe(before);
      expect(await fixture.chain.validator(address('002'))).toBeUndefined();
    } finally {
      await kubectlScale(fixture, 1);
      await waitFor(
        async () => {
          const { body } = await get<{ validators: ValidatorBody[] }>('/v1/validators');
          return body.validators.some((v) => v.id === '002' && v.wanted)
            ? pending('still wanted')
            : true;
        },
        { what: '002 to be unwanted again' },
      );
      expect((await post('/v1/resume')).status).toBe(200);
    }
    expect((await get<{ actions: unknown[] }>('/v1/plan')).body.actions).toEqual([]);
  });
});

describe('pause, resume and trigger-view', () => {
  it('POST /v1/pause stops actions until POST /v1/resume, and a scale meanwhile answers 409 PAUSED', async () => {
    const paused = await post<{ paused: boolean }>('/v1/pause');
    expect(paused).toEqual({ status: 200, body: { paused: true } });
    expect((await get<{ paused: boolean }>('/readyz')).body.paused).toBe(true);
    const refused = await post<ErrorBody>('/v1/scale', { replicas: 2 });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('PAUSED');
    expect(await fixture.replicas()).toBe(1);
    const resumed = await post<{ paused: boolean }>('/v1/resume');
    expect(resumed).toEqual({ status: 200, body: { paused: false } });
    expect(m.manager.paused).toBe(false);
  });

  it('POST /v1/trigger-view commits the next block and answers its height', async () => {
    const before = await fixture.chain.height();
    const { status, body } = await post<{ height: number; committed: boolean }>('/v1/trigger-view');
    expect(status).toBe(200);
    expect(body).toEqual({ height: before + 1, committed: true });
    expect(await fixture.chain.height()).toBe(before + 1);
  });
});

describe('POST /v1/scale', () => {
  it('scales up and answers 200 once the new validator has signed a committed block since its stake', async () => {
    const { status, body } = await scaleActive<{
      done: boolean;
      previous: number;
      replicas: number;
    }>(2);
    expect(status).toBe(200);
    expect(body).toMatchObject({ done: true, previous: 1, replicas: 2 });
    expect(await fixture.replicas()).toBe(2);
    const staked = await committedTx(address('002'), 'MessageStake');
    expect(staked).toBeDefined();
    expect((await signedAt(address('002'), staked! + 1)).length).toBeGreaterThan(0);
  });

  it('answers 409 SCALE_IN_PROGRESS while another scale waits, then 409 SCALE_BLOCKED naming who can never get there, long before its timeout', async () => {
    // 003 has no key in the Secret: its pod would come up, but it could never be staked. Unless
    // forced, that scale is refused before anything changes.
    const before = await fixture.replicas();
    const refused = await post<ErrorBody>('/v1/scale', { replicas: 3, wait: 'staked' });
    expect([refused.status, refused.body.error.code]).toEqual([409, 'KEY_MISSING']);
    expect(await fixture.replicas()).toBe(before);
    const started = performance.now();
    const first = post<{
      error: {
        code: string;
        details: { reason: string; missing: { id: string; phase: string; reason: string }[] };
      };
    }>('/v1/scale', { replicas: 3, wait: 'staked', timeoutSeconds: 120, force: true });
    await waitFor(() => (m.control.scaler.inFlight ? true : pending('idle')), {
      what: 'the first scale',
      intervalMs: 20,
    });
    const second = await post<ErrorBody>('/v1/scale', { replicas: 2 });
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('SCALE_IN_PROGRESS');
    const { status, body } = await first;
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(status).toBe(409);
    expect(body.error.code).toBe('SCALE_BLOCKED');
    expect(body.error.details.reason).toBe('VALIDATOR_STUCK');
    expect(body.error.details.missing).toEqual([
      { id: '003', phase: Phase.failed, reason: expect.stringMatching(/^KEY_MISSING/) as unknown },
    ]);
    expect(await fixture.replicas()).toBe(3);
  });

  it('refuses to drain a validator whose key is missing (it may be staked), naming KEY_MISSING', async () => {
    // 003 has no key: whether it is staked cannot be known, so its pod is not removed for it.
    const { status, body } = await post<ErrorBody & { error: { details?: unknown } }>('/v1/scale', {
      replicas: 1,
      wait: 'active',
      drive: true,
      timeoutSeconds: 60,
    });
    expect(status).toBe(409);
    expect(body.error.code).toBe('KEY_MISSING');
    expect(body.error.message).toMatch(/cannot drain 003/);
    expect(body.error.details).toEqual({ validators: [{ id: '003', code: 'KEY_MISSING' }] });
    expect(await fixture.replicas()).toBe(3);
    const pod = await fixture.core.readNamespacedPod({
      name: `${STATEFULSET}-1`,
      namespace: 'default',
    });
    expect(pod.metadata?.annotations?.['cluster-manager.dev/draining']).toBeUndefined();
  });

  it('scales down by draining first: the leaving validator is unstaked before the replicas drop', async () => {
    // Forced past 003's missing key (the operator knows it was never staked).
    const { status, body } = await post<{ done: boolean; drained: string[] }>('/v1/scale', {
      replicas: 1,
      wait: 'active',
      drive: true,
      timeoutSeconds: 60,
      force: true,
    });
    expect(status).toBe(200);
    expect(body.drained).toEqual(['002', '003']);
    expect(await fixture.replicas()).toBe(1);
    const row = await fixture.chain.validator(address('002'));
    expect(row?.unstaking_height).toBeGreaterThan(0);
    const unstaked = await committedTx(address('002'), 'MessageUnstake');
    expect(unstaked).toBeDefined();
    // The next certificates carry 001 alone, and blocks keep coming.
    await fixture.commitBlock();
    const latest = await fixture.chain.height();
    expect(await signedAt(address('002'), unstaked! + 1)).toEqual([]);
    expect((await signedAt(address('001'), latest)).length).toBe(1);
  });

  it('with wait none, a scale-down answers 202 at once and drops the replicas once the drain is over', async () => {
    // 002 left at the last test; an unstaking validator may stake again.
    const up = await scaleActive(2);
    expect(up.status).toBe(200);
    const { status, body } = await post<{ outcome: string; drained: string[]; done: boolean }>(
      '/v1/scale',
      { replicas: 1 },
    );
    expect(status).toBe(202);
    expect(body).toMatchObject({ outcome: 'draining', done: false, drained: ['002'] });
    expect(await fixture.replicas()).toBe(2);
    const pod = await fixture.core.readNamespacedPod({
      name: `${STATEFULSET}-1`,
      namespace: 'default',
    });
    expect(pod.metadata?.annotations?.['cluster-manager.dev/draining']).toBe('true');
    await fixture.commitUntil(
      async () =>
        (await fixture.replicas()) === 1 || pending(`replicas ${await fixture.replicas()}`),
      { what: 'the background drain to lower the replicas' },
    );
    expect((await fixture.chain.validator(address('002')))?.unstaking_height).toBeGreaterThan(0);
  });

  it('scales up past a draining pod that is gone before the manager saw it go (404 on its unmark)', async () => {
    const up = await scaleActive(2);
    expect(up.status).toBe(200);
    const pod = `${STATEFULSET}-1`;
    expect((await post('/v1/scale', { replicas: 1 })).status).toBe(202);
    await waitFor(
      () =>
        (kubernetesOf(m.manager)?.pods() ?? []).find((p) => p.metadata?.name === pod)?.metadata
          ?.annotations?.['cluster-manager.dev/draining'] === 'true'
          ? true
          : pending('the manager has not seen the mark'),
      { what: `${pod} marked draining in the manager's cache` },
    );
    // From here the manager's cache keeps the draining pod after the drain has removed it.
    fixture.emulator.faults.pauseEvents();
    try {
      await fixture.commitUntil(
        async () => {
          const gone = await fixture.core
            .readNamespacedPod({ name: pod, namespace: 'default' })
            .then(() => false)
            .catch(() => true);
          return (
            ((await fixture.replicas()) === 1 && gone) ||
            pending(`replicas ${await fixture.replicas()}; ${pod} gone: ${gone}`)
          );
        },
        { what: 'the drain to remove the pod' },
      );
      const again = await post<{ outcome: string }>('/v1/scale', { replicas: 2 });
      expect(again.status).toBe(200);
      expect(await fixture.replicas()).toBe(2);
    } finally {
      fixture.emulator.faults.resumeEvents();
    }
    await fixture.commitUntil(
      async () =>
        ((await fixture.chain.validator(address('002')))?.unstaking_height ?? 0) < 0 ||
        pending('002 not staked again yet'),
      { what: 'the manager to stake 002 again' },
    );
    const down = await scaleActive(1);
    expect(down.status).toBe(200);
  });

  /** POST /v1/scale to another manager than the file's own. */
  const scaleThrough = (to: { app: typeof m.app }, replicas: number) =>
    to.app.inject({ method: 'POST', url: '/v1/scale', headers: auth, payload: { replicas } });

  it('answers 503 NOT_READY before its informers have listed, not 501, and changes nothing', async () => {
    const early = await fixture.startManager({}, { start: false });
    try {
      const answer = await scaleThrough(early, 2);
      expect(answer.statusCode).toBe(503);
      expect(answer.json<ErrorBody>().error.code).toBe('NOT_READY');
      expect(await fixture.replicas()).toBe(1);
    } finally {
      await early.stop();
    }
  });

  it('answers 501 SCALE_UNSUPPORTED when the validators are not exactly one StatefulSet', async () => {
    const other = await fixture.startManager({ CM_NAMESPACE: 'kube-public' });
    try {
      const none = await scaleThrough(other, 1);
      expect(none.statusCode).toBe(501);
      expect(none.json<ErrorBody>().error.code).toBe('SCALE_UNSUPPORTED');
    } finally {
      await other.stop();
    }
    await fixture.apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: validatorStatefulSet('validator-b', 0, { rpc: 1, p2p: 2 }),
    });
    try {
      await waitFor(
        () => (kubernetesOf(m.manager)?.statefulSets().length === 2 ? true : pending('one set')),
        {
          what: 'the second StatefulSet in the cache',
        },
      );
      const before = journalSize();
      const { status, body } = await post<ErrorBody>('/v1/scale', { replicas: 2 });
      expect(status).toBe(501);
      expect(body.error.code).toBe('SCALE_UNSUPPORTED');
      expect(await fixture.replicas()).toBe(1);
      expect(journalSize()).toBe(before);
    } finally {
      await fixture.apps.deleteNamespacedStatefulSet({ name: 'validator-b', namespace: 'default' });
      await waitFor(
        () => (kubernetesOf(m.manager)?.statefulSets().length === 1 ? true : pending('two sets')),
        {
          what: 'the second StatefulSet to go',
        },
      );
    }
  });
});

describe('GET /v1/actions', () => {
  it('pages the journal newest first', async () => {
    const all = await get<{
      actions: { seq: number; kind: string; validatorId: string; state: string }[];
    }>('/v1/actions');
    expect(all.status).toBe(200);
    const seqs = all.body.actions.map((a) => a.seq);
    expect(seqs.length).toBe(journalSize());
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    // Retries (a dropped transaction sent again) may add entries; what committed is fixed.
    const committed = all.body.actions.filter((a) => a.state === 'committed');
    // Four scale-ups of 002 and four scale-downs in the tests above, newest first.
    expect(committed.map((a) => `${a.validatorId} ${a.kind}`)).toEqual(
      Array.from({ length: 4 }, () => ['002 unstake', '002 stake']).flat(),
    );
    const pages: number[][] = [];
    let before: number | null = null;
    do {
      const page: { status: number; body: { actions: { seq: number }[]; next: number | null } } =
        await get(`/v1/actions?limit=3${before === null ? '' : `&before=${before}`}`);
      expect(page.status).toBe(200);
      pages.push(page.body.actions.map((a) => a.seq));
      before = page.body.next;
    } while (before !== null);
    expect(pages.flat()).toEqual(seqs);
    expect(pages[0]).toHaveLength(3);
    expect(pages.at(-1)!.length).toBeGreaterThan(0);
    const one = await get<{ actions: { validatorId: string }[] }>('/v1/actions?validator=001');
    expect(one.body.actions).toEqual([]);
  });
});

describe('a drain', () => {
  it('holds when a leaving pod is recreated without its draining annotation', async () => {
    const up = await scaleActive(2);
    expect(up.status).toBe(200);
    const down = await post<{ outcome: string }>('/v1/scale', { replicas: 1 });
    expect(down.body.outcome).toBe('draining');
    // The pod goes (evicted, its node lost…); the StatefulSet controller makes a new one from
    // the template, which has no draining annotation.
    const name = `${STATEFULSET}-1`;
    const old = await fixture.core.readNamespacedPod({ name, namespace: 'default' });
    await fixture.core.deleteNamespacedPod({ name, namespace: 'default', gracePeriodSeconds: 0 });
    await waitFor(
      async () => {
        const pod = await fixture.core
          .readNamespacedPod({ name, namespace: 'default' })
          .catch(() => undefined);
        return pod !== undefined && pod.metadata?.uid !== old.metadata?.uid
          ? true
          : pending('not recreated yet');
      },
      { what: `${name} to be recreated` },
    );
    await fixture.commitUntil(
      async () =>
        (await fixture.replicas()) === 1 ||
        pending(`replicas ${await fixture.replicas()}; 002 is ${(await validator('002')).phase}`),
      { what: 'the drain to finish all the same' },
    );
    const row = await fixture.chain.validator(address('002'));
    expect(row?.unstaking_height).toBeGreaterThan(0);
  });
});

describe('GET /v1/departures/{pod}', () => {
  interface DepartureBody {
    pod: string;
    validatorId: string | null;
    departed: boolean;
    final: boolean;
    code: string;
    reason: string;
  }
  const departure = (pod: string, timeoutSeconds = 0) =>
    get<DepartureBody>(`/v1/departures/${pod}?timeoutSeconds=${timeoutSeconds}`);

  it('long-polls a leaving validator until it has left the set (the preStop hook question)', async () => {
    expect((await scaleActive(2)).status).toBe(200);
    const pod = `${STATEFULSET}-1`;
    // The chain moves only when a block is committed: the drain cannot finish yet.
    expect((await post('/v1/scale', { replicas: 1 })).status).toBe(202);
    const started = Date.now();
    const waiting = await departure(pod, 1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(waiting).toMatchObject({
      status: 200,
      body: { pod, validatorId: '002', departed: false, final: false, code: 'LEAVING' },
    });
    const answered = departure(pod, 30);
    let settled: { status: number; body: DepartureBody } | undefined;
    void answered.then((answer) => (settled = answer));
    await fixture.commitUntil(() => settled ?? pending('still long-polling'), {
      what: 'the long-poll to answer once 002 has left',
    });
    expect(settled).toMatchObject({
      status: 200,
      body: { validatorId: '002', departed: true, final: true, code: 'LEFT_SET' },
    });
    expect((await fixture.chain.validator(address('002')))?.unstaking_height).toBeGreaterThan(0);
    await fixture.commitUntil(
      async () => (await fixture.replicas()) === 1 || pending('drain not over'),
      { what: 'the drain to finish' },
    );
  });

  it('answers at once, final, for a pod whose validator stays: STILL_WANTED, NOT_A_VALIDATOR_POD', async () => {
    expect((await departure(`${STATEFULSET}-0`, 30)).body).toMatchObject({
      validatorId: '001',
      departed: false,
      final: true,
      code: 'STILL_WANTED',
    });
    expect((await departure('no-such-pod', 30)).body).toMatchObject({
      validatorId: null,
      final: true,
      code: 'NOT_A_VALIDATOR_POD',
    });
  });
});

describe('error answers of mutations', () => {
  it('POST /v1/scale answers 503 KUBE_UNAVAILABLE when the Kubernetes API fails the patch', async () => {
    const before = journalSize();
    const replicas = await fixture.replicas();
    fixture.emulator.faults.failNext(1, 500);
    const { status, body } = await post<ErrorBody>('/v1/scale', { replicas: replicas + 1 });
    expect(status).toBe(503);
    expect(body.error.code).toBe('KUBE_UNAVAILABLE');
    expect(await fixture.replicas()).toBe(replicas);
    expect(journalSize()).toBe(before);
    expect(m.control.scaler.inFlight).toBe(false);
  });

  it('POST /v1/trigger-view answers 503 CHAIN_UNAVAILABLE when the chain does not answer', async () => {
    const dead = await refusedPort();
    const other = await fixture.startManager({
      CM_NAMESPACE: 'kube-public',
      CM_CHAIN_RPC_URL: `http://127.0.0.1:${dead.port}`,
    });
    try {
      const response = await other.app.inject({
        method: 'POST',
        url: '/v1/trigger-view',
        headers: auth,
      });
      expect(response.statusCode).toBe(503);
      expect(response.json<ErrorBody>().error).toEqual({
        code: 'CHAIN_UNAVAILABLE',
        message: 'trigger view failed: the chain did not accept it',
      });
    } finally {
      await other.stop();
      await dead.release();
    }
  });

  it('in CLI mode, trigger-view answers 502 CLI_FAILED when p1 fails and 504 CLI_TIMEOUT when it hangs', async () => {
    // Stand-ins for p1 that fail the way a broken or stuck CLI does.
    const failing = join(fixture.dir, 'p1-failing');
    const hanging = join(fixture.dir, 'p1-hanging');
    await writeFile(failing, '#!/bin/sh\necho "no such command" >&2\nexit 1\n', { mode: 0o755 });
    await writeFile(hanging, '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 });
    for (const [cli, status, code] of [
      [failing, 502, 'CLI_FAILED'],
      [hanging, 504, 'CLI_TIMEOUT'],
    ] as const) {
      const other = await fixture.startManager({
        CM_NAMESPACE: 'kube-public',
        CM_TX_MODE: 'cli',
        CM_CLI_PATH: cli,
        CM_CLI_TIMEOUT: '300ms',
      });
      try {
        const height = await fixture.chain.height();
        const response = await other.app.inject({
          method: 'POST',
          url: '/v1/trigger-view',
          headers: auth,
        });
        expect(response.statusCode, cli).toBe(status);
        expect(response.json<ErrorBody>().error.code).toBe(code);
        expect(await fixture.chain.height()).toBe(height);
      } finally {
        await other.stop();
      }
    }
  });
});

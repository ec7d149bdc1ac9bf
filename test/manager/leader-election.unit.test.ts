// LeaderElector over client-node's CoordinationV1Api and an in-memory API (no socket), on a manual
// clock: acquire a free lease, renew every retry period, keep off a lease another holder renews,
// take over one that stopped being renewed (judged from our own observation, not the lease's
// clock), step down after the renew deadline, lose a write race (409), release on stop.
import { CoordinationV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LeaderElector } from '../../src/manager/kube/leader-election.ts';
import { FakeKubeApi } from '../support/fake-kube-api.ts';
import { flush, ManualClock } from '../support/manual-clock.ts';

const LEASE = '/apis/coordination.k8s.io/v1/namespaces/ns/leases/cluster-manager';
const TIMING = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

interface Spec {
  holderIdentity?: string;
  renewTime?: string;
  acquireTime?: string;
  leaseTransitions?: number;
  leaseDurationSeconds?: number;
}

function elector(api: FakeKubeApi, clock: ManualClock, identity: string) {
  const seen = { started: 0, stopped: 0, leaders: [] as (string | undefined)[] };
  let signal: AbortSignal | undefined;
  const e = new LeaderElector({
    coordination: new CoordinationV1Api(api.configuration),
    namespace: 'ns',
    name: 'cluster-manager',
    identity,
    ...TIMING,
    clock,
    logger: pino({ level: 'silent' }),
    onStartedLeading: (s) => {
      seen.started++;
      signal = s;
    },
    onStoppedLeading: () => seen.stopped++,
    onNewLeader: (id) => seen.leaders.push(id),
  });
  return {
    e,
    seen,
    get signal() {
      return signal;
    },
  };
}

function spec(api: FakeKubeApi): Spec {
  return api.objects.get(LEASE)?.spec ?? {};
}

/** Another replica's lease, renewed at `renewTime`. */
function heldBy(api: FakeKubeApi, holderIdentity: string, renewTime: string): void {
  api.put(LEASE, {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'cluster-manager', namespace: 'ns' },
    spec: { holderIdentity, leaseDurationSeconds: 15, renewTime, leaseTransitions: 3 },
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('LeaderElector', () => {
  it('acquires a lease nobody holds, and renews it every retry period', async () => {
    const api = new FakeKubeApi();
    const clock = new ManualClock();
    const a = elector(api, clock, 'manager-a');
    a.e.start();
    await flush();
    expect(a.e.isLeader).toBe(true);
    expect(a.seen).toMatchObject({ started: 1, stopped: 0, leaders: ['manager-a'] });
    const at = new Date(clock.now()).toISOString();
    expect(spec(api)).toMatchObject({
      holderIdentity: 'manager-a',
      leaseDurationSeconds: 15,
      leaseTransitions: 0,
    });
    expect(new Date(spec(api).acquireTime!).toISOString()).toBe(at);

    const puts = (): number => api.requests.filter((r) => r.method === 'PUT').length;
    await clock.advance(1_999);
    expect(puts()).toBe(0);
    await clock.advance(1);
    expect(puts()).toBe(1); // the leader renews after exactly one retry period (no jitter)
    expect(new Date(spec(api).renewTime!).getTime()).toBe(clock.now());
    await clock.advance(10_000);
    expect(puts()).toBe(6);
    expect(spec(api)).toMatchObject({ holderIdentity: 'manager-a', leaseTransitions: 0 });
    expect(new Date(spec(api).acquireTime!).toISOString()).toBe(at); // kept across renewals
    expect(a.seen.started).toBe(1);
    await a.e.stop();
  });

  it('keeps off a lease another holder renews; takes it over once it is not renewed for a lease duration of our own observation', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0); // followers' jitter: none
    const api = new FakeKubeApi();
    const clock = new ManualClock();
    // The other holder's clock is an hour behind ours: its renewTime alone says "expired".
    const skewed = (ms: number) => new Date(ms - 3_600_000).toISOString();
    heldBy(api, 'manager-b', skewed(clock.now()));
    const a = elector(api, clock, 'manager-a');
    a.e.start();
    await flush();
    expect(a.e.isLeader).toBe(false);
    expect(a.e.holder).toBe('manager-b');

    // b renews every 2 s for 30 s: a never takes over.
    for (let i = 0; i < 15; i++) {
      await clock.advance(2_000);
      heldBy(api, 'manager-b', skewed(clock.now()));
    }
    expect(a.e.isLeader).toBe(false);
    expect(spec(api).holderIdentity).toBe('manager-b');

    // b stops renewing. a's next try sees its last renewal; a takes over at the first try at or
    // past 15 s after that observation.
    await clock.advance(2_000);
    const lastSeen = clock.now();
    await clock.advance(14_000);
    expect(a.e.isLeader).toBe(false);
    await clock.advance(2_000);
    expect(a.e.isLeader).toBe(true);
    expect(clock.now() - lastSeen).toBeGreaterThanOrEqual(15_000);
    expect(spec(api)).toMatchObject({ holderIdentity: 'manager-a', leaseTransitions: 4 });
    expect(new Date(spec(api).acquireTime!).getTime()).toBe(clock.now());
    expect(a.seen.leaders).toEqual(['manager-b', 'manager-a']);
    await a.e.stop();
  });

  it('steps down when renewals fail for the renew deadline (signal aborted), not before', async () => {
    const api = new FakeKubeApi();
    const clock = new ManualClock();
    const a = elector(api, clock, 'manager-a');
    a.e.start();
    await flush();
    expect(a.e.isLeader).toBe(true);
    // The apiserver fails every read from now on (a partition).
    for (let i = 0; i < 20; i++) api.failNext('GET', 503, 'ServiceUnavailable');
    await clock.advance(8_000);
    expect(a.e.isLeader).toBe(true);
    expect(a.signal?.aborted).toBe(false);
    await clock.advance(2_000); // 10 s since the last renewal
    expect(a.e.isLeader).toBe(false);
    expect(a.signal?.aborted).toBe(true);
    expect(a.seen).toMatchObject({ started: 1, stopped: 1 });
    await a.e.stop();
  });

  it('a renewal that fails once is retried; leadership survives a short fault', async () => {
    const api = new FakeKubeApi();
    const clock = new ManualClock();
    const a = elector(api, clock, 'manager-a');
    a.e.start();
    await flush();
    api.failNext('PUT', 500);
    api.failNext('PUT', 500);
    await clock.advance(6_000);
    expect(a.e.isLeader).toBe(true);
    expect(new Date(spec(api).renewTime!).getTime()).toBe(clock.now());
    expect(a.seen.stopped).toBe(0);
    await a.e.stop();
  });

  it('loses a write race: another replica writes between our read and our replace (409), and keeps the lease', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const api = new FakeKubeApi();
    const clock = new ManualClock();
    heldBy(api, '', new Date(clock.now()).toISOString()); // released: free to take
    // b takes the lease after a has read it and before a's replace is served.
    api.beforeNext('PUT', () => heldBy(api, 'manager-b', new Date(clock.now()).toISOString()));
    const a = elector(api, clock, 'manager-a');
    a.e.start();
    await flush();
    expect(api.requests.map((r) => r.method)).toEqual(['GET', 'PUT']);
    expect(a.e.isLeader).toBe(false);
    expect(a.seen.started).toBe(0);
    expect(spec(api).holderIdentity).toBe('manager-b');
    await clock.advance(2_000);
    expect(a.e.isLeader).toBe(false);
    expect(a.e.holder).toBe('manager-b');
    await a.e.stop();
  });

  it('two replicas: one leader at a time; the leader’s stop() releases and the other takes over at its next try', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const api = new FakeKubeApi();
    const clock = new ManualClock();
    const a = elector(api, clock, 'manager-a');
    const b = elector(api, clock, 'manager-b');
    a.e.start();
    await flush();
    b.e.start();
    for (let i = 0; i < 10; i++) {
      await clock.advance(1_000);
      expect([a.e.isLeader, b.e.isLeader]).toEqual([true, false]);
    }
    await a.e.stop();
    expect(a.seen.stopped).toBe(1);
    expect(spec(api)).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    await clock.advance(2_000); // one retry period, far less than the 15 s lease
    expect(b.e.isLeader).toBe(true);
    expect(spec(api)).toMatchObject({ holderIdentity: 'manager-b', leaseTransitions: 1 });
    await b.e.stop();
  });

  it('stop() does not release a lease somebody else holds by now', async () => {
    const api = new FakeKubeApi();
    const clock = new ManualClock();
    const a = elector(api, clock, 'manager-a');
    a.e.start();
    await flush();
    heldBy(api, 'manager-b', new Date(clock.now()).toISOString()); // b took it meanwhile
    await a.e.stop();
    expect(spec(api).holderIdentity).toBe('manager-b');
    expect(a.seen.stopped).toBe(1);
  });
});

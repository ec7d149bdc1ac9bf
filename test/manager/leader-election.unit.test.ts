// LeaderElector over client-node's CoordinationV1Api and an in-memory API (no socket), on a manual
// clock: acquire a free lease, renew every retry period, keep off a lease another holder renews,
// take over one that stopped being renewed (judged from our own observation, not the lease's
// clock), step down after the renew deadline, lose a write race (409), release on stop; and the
// fence of issue 30: step down on reading another holder, a renew deadline measured on the
// monotonic clock (a wall clock stepped back an hour keeps nobody leading), a deleted Lease waited
// out by followers, `mayAct()` false from the deadline on even while a renewal hangs, and terms.
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

/** A released lease (as a leader's stop() leaves it): free to take at the first try. */
function released(api: FakeKubeApi, clock: ManualClock): void {
  api.put(LEASE, {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'cluster-manager', namespace: 'ns' },
    spec: {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      renewTime: new Date(clock.now()).toISOString(),
      leaseTransitions: 0,
    },
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('LeaderElector', () => {
  it('creates a Lease when there is none, acts a renew deadline later (renewing it meanwhile), then renews it every retry period', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0); // followers' jitter: none
    const api = new FakeKubeApi();
    const clock = new ManualClock();
    const a = elector(api, clock, 'manager-a');
    a.e.start();
    await flush();
    // Created at once, but no acting yet: a Lease may have been deleted under a leader that acts
    // until its own renew deadline.
    expect(spec(api)).toMatchObject({ holderIdentity: 'manager-a', leaseTransitions: 0 });
    expect(a.e.isLeader).toBe(false);
    await clock.advance(8_000);
    expect(a.e.isLeader).toBe(false);
    expect(a.e.mayAct()).toBe(false);
    await clock.advance(2_000); // the first try at or past 10 s after the create
    expect(a.e.isLeader).toBe(true);
    expect(a.e.term).toBe(0);
    api.requests.length = 0;
    const at = new Date(spec(api).acquireTime!).toISOString();
    const puts = (): number => api.requests.filter((r) => r.method === 'PUT').length;
    expect(puts()).toBe(0);
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
    released(api, clock);
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
    released(api, clock);
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
    released(api, clock);
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
    expect(spec(api)).toMatchObject({ holderIdentity: 'manager-b', leaseTransitions: 2 });
    await b.e.stop();
  });

  it('stop() does not release a lease somebody else holds by now', async () => {
    const api = new FakeKubeApi();
    const clock = new ManualClock();
    released(api, clock);
    const a = elector(api, clock, 'manager-a');
    a.e.start();
    await flush();
    heldBy(api, 'manager-b', new Date(clock.now()).toISOString()); // b took it meanwhile
    await a.e.stop();
    expect(spec(api).holderIdentity).toBe('manager-b');
    expect(a.seen.stopped).toBe(1);
  });

  it('steps down at its next try on reading another holder, not at its renew deadline (issue 30)', async () => {
    const api = new FakeKubeApi();
    const clock = new ManualClock();
    released(api, clock);
    const a = elector(api, clock, 'manager-a');
    a.e.start();
    await flush();
    expect(a.e.isLeader).toBe(true);
    // Someone else wrote the Lease (the Lease was deleted and another replica created it).
    heldBy(api, 'manager-b', new Date(clock.now()).toISOString());
    await clock.advance(2_000); // a's next renewal reads it
    expect(a.e.isLeader).toBe(false);
    expect(a.e.mayAct()).toBe(false);
    expect(a.signal?.aborted).toBe(true);
    expect(a.seen.stopped).toBe(1);
    expect(spec(api).holderIdentity).toBe('manager-b'); // not taken back
    await a.e.stop();
  });

  it('a leader whose wall clock steps back an hour and that cannot renew steps down at its renew deadline by the monotonic clock (issue 30)', async () => {
    const api = new FakeKubeApi();
    const clock = new ManualClock();
    released(api, clock);
    const a = elector(api, clock, 'manager-a');
    a.e.start();
    await flush();
    expect(a.e.isLeader).toBe(true);
    clock.stepWall(-3_600_000);
    for (let i = 0; i < 20; i++) api.failNext('GET', 503, 'ServiceUnavailable'); // and loses the API
    await clock.advance(9_999);
    expect(a.e.isLeader).toBe(true);
    expect(a.e.mayAct()).toBe(true);
    await clock.advance(1);
    expect(a.e.mayAct()).toBe(false);
    expect(a.e.isLeader).toBe(false);
    expect(a.signal?.aborted).toBe(true);
    await a.e.stop();
  });

  it('mayAct() is false from the renew deadline on, and the leader steps down then, even while a renewal hangs', async () => {
    const api = new FakeKubeApi();
    const clock = new ManualClock();
    released(api, clock);
    const a = elector(api, clock, 'manager-a');
    a.e.start();
    await flush();
    expect(a.e.mayAct()).toBe(true);
    const release = api.hangNext('GET'); // the next renewal's read never answers
    await clock.advance(9_999);
    expect(a.e.mayAct()).toBe(true);
    await clock.advance(1); // 10 s after the last renewal that succeeded began
    expect(a.e.mayAct()).toBe(false);
    expect(a.e.isLeader).toBe(false);
    expect(a.signal?.aborted).toBe(true);
    release();
    await flush();
    await a.e.stop();
  });

  it('a follower that reads no Lease (deleted under its leader) creates it, and acts only a renew deadline later (issue 30)', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const api = new FakeKubeApi();
    const clock = new ManualClock();
    heldBy(api, 'manager-a', new Date(clock.now()).toISOString());
    const b = elector(api, clock, 'manager-b');
    b.e.start();
    await flush();
    expect(b.e.holder).toBe('manager-a');
    await clock.advance(2_000);
    heldBy(api, 'manager-a', new Date(clock.now()).toISOString()); // a renews at 2 s…
    await clock.advance(1_000);
    api.objects.delete(LEASE); // …then kubectl deletes the Lease; a acts until its deadline (12 s)
    await clock.advance(1_000); // b reads: no Lease; creates it
    const createdAt = clock.now();
    expect(spec(api)).toMatchObject({ holderIdentity: 'manager-b', leaseTransitions: 4 });
    await clock.advance(8_000);
    expect(b.e.isLeader).toBe(false);
    await clock.advance(2_000);
    expect(b.e.isLeader).toBe(true);
    expect(clock.now() - createdAt).toBeGreaterThanOrEqual(10_000); // past a's deadline
    expect(b.e.term).toBe(4); // the count goes on from the deleted Lease's 3
    await b.e.stop();
  });

  it('two replicas and a Lease deleted before every follower try: never two leaders (issue 30)', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const api = new FakeKubeApi();
    const clock = new ManualClock();
    released(api, clock);
    const a = elector(api, clock, 'manager-a');
    const b = elector(api, clock, 'manager-b');
    a.e.start();
    await flush();
    b.e.start();
    await flush();
    // Both try every 2 s, a first: the Lease goes between a's read and b's, so b always reads none
    // (and creates it again, and a reads b's Lease).
    const leaders: string[] = [];
    for (let i = 0; i < 30; i++) {
      api.beforeNext('GET', () => undefined); // a's read
      api.beforeNext('GET', () => api.objects.delete(LEASE)); // b's read
      await clock.advance(2_000);
      expect(a.e.isLeader && b.e.isLeader).toBe(false);
      leaders.push(a.e.isLeader ? 'a' : b.e.isLeader ? 'b' : '-');
    }
    // a read b's Lease and stepped down; b never kept one for a renew deadline: nobody leads.
    expect(leaders.join('')).toBe(`a${'-'.repeat(29)}`);
    expect(b.seen.started).toBe(0);
    await a.e.stop();
    await b.e.stop();
  });

  it('a leader that reads no Lease steps down at once, creates it again, and acts a renew deadline later', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const api = new FakeKubeApi();
    const clock = new ManualClock();
    released(api, clock);
    const a = elector(api, clock, 'manager-a');
    a.e.start();
    await flush();
    const term = a.e.term ?? -1;
    api.objects.delete(LEASE);
    await clock.advance(2_000);
    expect(a.e.isLeader).toBe(false);
    expect(a.signal?.aborted).toBe(true);
    await clock.advance(2_000); // created again
    expect(spec(api)).toMatchObject({ holderIdentity: 'manager-a', leaseTransitions: term + 1 });
    await clock.advance(8_000);
    expect(a.e.isLeader).toBe(false);
    await clock.advance(2_000);
    expect(a.e.isLeader).toBe(true);
    expect(a.e.term).toBe(term + 1);
    await a.e.stop();
  });

  it('numbers its terms: each leadership gets a higher one, also on a lease that still names it', async () => {
    const api = new FakeKubeApi();
    const clock = new ManualClock();
    released(api, clock);
    const a = elector(api, clock, 'manager-a');
    a.e.start();
    await flush();
    const first = a.e.term ?? -1;
    expect(first).toBe(1);
    for (let i = 0; i < 20; i++) api.failNext('GET', 503, 'ServiceUnavailable');
    await clock.advance(10_000);
    expect(a.e.isLeader).toBe(false);
    expect(a.e.term).toBeUndefined();
    await clock.advance(40_000); // the faults are used up; the lease still names a
    expect(a.e.isLeader).toBe(true);
    expect(a.e.term).toBe(first + 1);
    expect(a.seen.started).toBe(2);
    await a.e.stop();
  });
});

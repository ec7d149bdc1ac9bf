// The pause as cluster state (issue 30, item 5): PauseState over a record (a read that began
// before the last write ended is older news; a failed write changes nothing; a record that cannot
// be read is retried before anything acts), and the Lease record over client-node and an
// in-memory API (only the holder writes under election, with the resourceVersion as a
// precondition; without election the one manager creates the Lease; a conflict is read again).
import { CoordinationV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ManagerError } from '../../src/manager/errors.ts';
import { LeasePauseRecord, pausedOn } from '../../src/manager/kube/lease-pause-record.ts';
import { PauseState, type PauseRecord } from '../../src/manager/pause/pause-state.ts';
import { FakeKubeApi } from '../support/fake-kube-api.ts';
import { flush, ManualClock } from '../support/manual-clock.ts';

const LEASE = '/apis/coordination.k8s.io/v1/namespaces/ns/leases/cluster-manager';
const logger = pino({ level: 'silent' });

function memoryRecord(): PauseRecord & { value: boolean | undefined; fail: Error | undefined } {
  return {
    where: 'memory',
    value: undefined,
    fail: undefined,
    read() {
      return this.fail === undefined ? Promise.resolve(this.value) : Promise.reject(this.fail);
    },
    write(paused) {
      if (this.fail !== undefined) return Promise.reject(this.fail);
      this.value = paused;
      return Promise.resolve();
    },
  };
}

function state(record: PauseRecord, clock = new ManualClock()) {
  const changes: boolean[] = [];
  const pause = new PauseState({ record, clock, logger, onChange: (p) => changes.push(p) });
  return { pause, changes, clock };
}

describe('PauseState', () => {
  it('is unknown until read; a read applies; set records first, then applies', async () => {
    const record = memoryRecord();
    record.value = true;
    const { pause, changes } = state(record);
    expect(pause.known).toBe(false);
    await pause.load();
    expect([pause.known, pause.paused]).toEqual([true, true]);
    await pause.set(false);
    expect([record.value, pause.paused]).toEqual([false, false]);
    expect(changes).toEqual([true, false]);
  });

  it('a write that fails changes nothing, and says so', async () => {
    const record = memoryRecord();
    const { pause, changes } = state(record);
    await pause.load();
    record.fail = new ManagerError('NOT_LEADER', 'manager-b holds the Lease');
    await expect(pause.set(true)).rejects.toMatchObject({ code: 'NOT_LEADER' });
    expect(pause.paused).toBe(false);
    expect(changes).toEqual([]);
    record.fail = new Error('EIO');
    await expect(pause.set(true)).rejects.toMatchObject({
      code: 'INTERNAL',
      message: expect.stringMatching(/could not record the pause on memory: Error: EIO; nothing/),
    });
  });

  it('a read that began before the last write ended is ignored (a Lease read in flight during a pause)', async () => {
    const record = memoryRecord();
    const { pause, clock } = state(record);
    await pause.load();
    const readStarted = clock.monotonic();
    await clock.advance(10);
    await pause.set(true);
    pause.observe(false, readStarted); // the elector's read, answered before the pause was written
    expect(pause.paused).toBe(true);
    await clock.advance(10);
    pause.observe(false, clock.monotonic()); // a later read: kubectl annotated it back
    expect(pause.paused).toBe(false);
  });

  it('load retries a record that cannot be read, and stops when aborted', async () => {
    const record = memoryRecord();
    record.fail = new Error('connection refused');
    const { pause, clock } = state(record);
    const loading = pause.load();
    await clock.advance(1_000);
    expect(pause.known).toBe(false);
    record.fail = undefined;
    record.value = true;
    await clock.advance(5_000);
    await loading;
    expect([pause.known, pause.paused]).toEqual([true, true]);

    record.fail = new Error('connection refused');
    const other = state(record, clock).pause;
    const abort = new AbortController();
    const stopped = other.load(abort.signal);
    await flush();
    abort.abort();
    await stopped;
    expect(other.known).toBe(false);
  });

  it('what a Lease created again starts with: the pause known, or nothing', async () => {
    const record = memoryRecord();
    const { pause } = state(record);
    expect(pause.annotations()).toEqual({});
    await pause.set(true);
    expect(pause.annotations()).toEqual({ 'cluster-manager.dev/paused': 'true' });
  });
});

describe('LeasePauseRecord', () => {
  function lease(api: FakeKubeApi, holder: string, annotations: Record<string, string> = {}) {
    api.put(LEASE, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'cluster-manager', namespace: 'ns', annotations },
      spec: { holderIdentity: holder, leaseDurationSeconds: 15, leaseTransitions: 2 },
    });
  }
  function record(api: FakeKubeApi, election: boolean, identity = 'manager-a') {
    return new LeasePauseRecord({
      coordination: new CoordinationV1Api(api.configuration),
      namespace: 'ns',
      name: 'cluster-manager',
      identity,
      election,
    });
  }
  const annotations = (api: FakeKubeApi) =>
    (api.objects.get(LEASE)?.metadata as { annotations?: Record<string, string> } | undefined)
      ?.annotations;

  it('reads the annotation: true, false, or nothing recorded (no Lease, no or another value)', async () => {
    const api = new FakeKubeApi();
    const r = record(api, true);
    expect(await r.read()).toBeUndefined();
    lease(api, 'manager-a', { 'cluster-manager.dev/paused': 'true' });
    expect(await r.read()).toBe(true);
    lease(api, 'manager-a', { 'cluster-manager.dev/paused': 'false' });
    expect(await r.read()).toBe(false);
    lease(api, 'manager-a', { 'cluster-manager.dev/paused': 'yes' });
    expect(await r.read()).toBeUndefined();
    expect(pausedOn(undefined)).toBeUndefined();
  });

  it('under election, the holder writes it (other annotations and the spec kept); anyone else gets NOT_LEADER', async () => {
    const api = new FakeKubeApi();
    lease(api, 'manager-a', { 'example.com/owner': 'team' });
    await record(api, true).write(true);
    expect(annotations(api)).toEqual({
      'example.com/owner': 'team',
      'cluster-manager.dev/paused': 'true',
    });
    expect(api.objects.get(LEASE)?.spec).toMatchObject({ holderIdentity: 'manager-a' });
    await expect(record(api, true, 'manager-b').write(false)).rejects.toMatchObject({
      code: 'NOT_LEADER',
      details: { leader: 'manager-a' },
    });
    expect(annotations(api)?.['cluster-manager.dev/paused']).toBe('true');
    api.objects.delete(LEASE);
    await expect(record(api, true).write(false)).rejects.toMatchObject({ code: 'NOT_LEADER' });
    expect(api.objects.has(LEASE)).toBe(false); // the elector's to create, not the pause's
  });

  it("a renewal between the pause's read and write (409) is read again; the pause is kept", async () => {
    const api = new FakeKubeApi();
    lease(api, 'manager-a');
    api.beforeNext('PUT', () => lease(api, 'manager-a')); // the elector renewed meanwhile
    await record(api, true).write(true);
    expect(api.requests.map((r) => r.method)).toEqual(['GET', 'PUT', 'GET', 'PUT']);
    expect(annotations(api)?.['cluster-manager.dev/paused']).toBe('true');
  });

  it('without election, creates the Lease when there is none (no holder: free for an elector)', async () => {
    const api = new FakeKubeApi();
    await record(api, false).write(true);
    expect(annotations(api)).toEqual({ 'cluster-manager.dev/paused': 'true' });
    expect(api.objects.get(LEASE)?.spec).toEqual({});
    await record(api, false).write(false);
    expect(annotations(api)).toEqual({ 'cluster-manager.dev/paused': 'false' });
  });

  it('an API that fails: KUBE_UNAVAILABLE naming the Lease, nothing written', async () => {
    const api = new FakeKubeApi();
    lease(api, 'manager-a');
    api.failNext('PUT', 500);
    await expect(record(api, true).write(true)).rejects.toMatchObject({
      code: 'KUBE_UNAVAILABLE',
      message: expect.stringMatching(/could not record the pause on the Lease cluster-manager/),
    });
    expect(annotations(api)).toEqual({});
  });
});

// EventRecorder over client-node's CoreV1Api and an in-memory API (no socket): an Event names its
// object by uid, a repeat bumps `count` by a merge patch instead of creating another Event (as
// client-go's recorder aggregates), and a failed write is dropped without throwing.
import { CoreV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { EventRecorder, type EventTarget } from '../../src/manager/kube/event-recorder.ts';
import { FakeKubeApi } from '../support/fake-kube-api.ts';
import { ManualClock } from '../support/manual-clock.ts';

const EVENTS = '/api/v1/namespaces/ns/events';
const POD: EventTarget = {
  kind: 'Pod',
  apiVersion: 'v1',
  name: 'validator-4',
  namespace: 'ns',
  uid: 'uid-4',
};

function setup() {
  const api = new FakeKubeApi();
  const clock = new ManualClock();
  const lines: { msg: string; reason?: string; err?: { type: string; code?: number } }[] = [];
  const logger = pino(
    { level: 'debug' },
    { write: (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]) },
  );
  const recorder = new EventRecorder({
    core: new CoreV1Api(api.configuration),
    component: 'cluster-manager',
    instance: 'manager-0',
    logger,
    clock,
  });
  return { api, clock, recorder, lines };
}

describe('EventRecorder', () => {
  it('creates an Event about the object, by uid, with source and reporting component', async () => {
    const { api, clock, recorder } = setup();
    await recorder.record(POD, 'Normal', 'Staked', 'validator 005: stake committed at height 9');
    const [event] = api.list(EVENTS);
    const at = new Date(clock.now()).toISOString();
    expect(event).toMatchObject({
      metadata: { namespace: 'ns', name: expect.stringMatching(/^validator-4\.[0-9a-f]{16}$/) },
      involvedObject: { kind: 'Pod', apiVersion: 'v1', name: 'validator-4', uid: 'uid-4' },
      type: 'Normal',
      reason: 'Staked',
      message: 'validator 005: stake committed at height 9',
      count: 1,
      firstTimestamp: at,
      lastTimestamp: at,
      source: { component: 'cluster-manager', host: 'manager-0' },
      reportingComponent: 'cluster-manager',
      reportingInstance: 'manager-0',
    });
  });

  it('aggregates a repeat: one Event, count and lastTimestamp bumped by a merge patch', async () => {
    const { api, clock, recorder } = setup();
    const first = new Date(clock.now()).toISOString();
    await recorder.record(POD, 'Warning', 'StakeFailed', 'no funds');
    await clock.advance(5_000);
    await recorder.record(POD, 'Warning', 'StakeFailed', 'no funds');
    await clock.advance(5_000);
    await recorder.record(POD, 'Warning', 'StakeFailed', 'no funds');
    const events = api.list(EVENTS);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      count: 3,
      firstTimestamp: first,
      lastTimestamp: new Date(clock.now()).toISOString(),
    });
    const patches = api.requests.filter((r) => r.method === 'PATCH');
    expect(patches).toHaveLength(2);
    expect(patches[0]!.contentType).toBe('application/merge-patch+json');
    expect(patches[1]!.body).toEqual({ count: 3, lastTimestamp: events[0]!.lastTimestamp });
  });

  it('keeps Events apart when the object, type, reason or message differ', async () => {
    const { api, recorder } = setup();
    await recorder.record(POD, 'Warning', 'StakeFailed', 'no funds');
    await recorder.record(POD, 'Warning', 'StakeFailed', 'below minimum');
    await recorder.record(POD, 'Warning', 'UnstakeFailed', 'no funds');
    await recorder.record(POD, 'Normal', 'StakeFailed', 'no funds');
    await recorder.record({ ...POD, uid: 'uid-4b' }, 'Warning', 'StakeFailed', 'no funds');
    expect(api.list(EVENTS)).toHaveLength(5);
    expect(api.list(EVENTS).map((e) => e.count)).toEqual([1, 1, 1, 1, 1]);
  });

  it('a failed create is dropped and logged, never thrown; the next record creates it', async () => {
    const { api, recorder, lines } = setup();
    api.failNext('POST', 403, 'Forbidden');
    await expect(recorder.record(POD, 'Normal', 'Staked', 'm')).resolves.toBeUndefined();
    expect(api.list(EVENTS)).toEqual([]);
    expect(lines.at(-1)).toMatchObject({
      msg: 'event not recorded',
      reason: 'Staked',
      err: { type: 'ApiException', code: 403 }, // under `err`: the redacting serializer applies
    });
    // Not remembered: a repeat creates the Event (a patch would hit nothing).
    await recorder.record(POD, 'Normal', 'Staked', 'm');
    expect(api.list(EVENTS)).toMatchObject([{ count: 1 }]);
    expect(api.requests.map((r) => r.method)).toEqual(['POST', 'POST']);
  });

  it('an Event deleted meanwhile (patch answers 404): forgotten, and the next repeat creates a new one', async () => {
    const { api, recorder } = setup();
    await recorder.record(POD, 'Warning', 'StakeFailed', 'no funds');
    const [path] = [...api.objects.keys()];
    api.objects.delete(path!); // Events expire (the apiserver's --event-ttl, 1 h by default)
    await expect(
      recorder.record(POD, 'Warning', 'StakeFailed', 'no funds'),
    ).resolves.toBeUndefined();
    expect(api.list(EVENTS)).toEqual([]);
    await recorder.record(POD, 'Warning', 'StakeFailed', 'no funds');
    expect(api.list(EVENTS)).toMatchObject([{ count: 1, reason: 'StakeFailed' }]);
    expect(api.requests.map((r) => r.method)).toEqual(['POST', 'PATCH', 'POST']);
  });

  it('remembers at most 4096 Events: the oldest is forgotten first (a repeat of it creates anew)', async () => {
    const { api, recorder } = setup();
    for (let i = 0; i <= 4096; i++) await recorder.record(POD, 'Normal', 'Tick', `m${i}`);
    expect(api.list(EVENTS)).toHaveLength(4097);
    await recorder.record(POD, 'Normal', 'Tick', 'm1'); // still remembered: patched
    await recorder.record(POD, 'Normal', 'Tick', 'm0'); // evicted: created again
    const methods = api.requests.slice(-2).map((r) => r.method);
    expect(methods).toEqual(['PATCH', 'POST']);
    expect(api.list(EVENTS)).toHaveLength(4098);
  });
});

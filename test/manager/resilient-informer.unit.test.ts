// ResilientInformer driven through its injected list function and a fake of client-node's Watch
// (the port to the apiserver), with client-node's own ListWatch in between, unchanged: synced only
// after a first successful list, restarts after errors with a backoff that doubles to its cap and
// starts over after a success, 410 Gone relists, stop() cancels a pending restart.
import {
  ApiException,
  KubeConfig,
  Watch,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  FORBIDDEN_RETRY_MS,
  ResilientInformer,
} from '../../src/manager/kube/resilient-informer.ts';
import { flush, ManualClock } from '../support/manual-clock.ts';

type Obj = KubernetesObject & { metadata: { name: string; resourceVersion: string } };

interface WatchCall {
  path: string;
  query: Record<string, unknown>;
  emit: (phase: string, object: Obj) => void;
  end: (error: unknown) => void;
  controller: AbortController;
}

/** client-node's Watch with the HTTP stream replaced by calls a test makes. */
class FakeWatch extends Watch {
  readonly calls: WatchCall[] = [];
  constructor() {
    super(new KubeConfig());
  }
  override watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    emit: (phase: string, object: Obj) => void,
    end: (error: unknown) => void,
  ): Promise<AbortController> {
    const controller = new AbortController();
    this.calls.push({ path, query, emit, end, controller });
    return Promise.resolve(controller);
  }
  get last(): WatchCall {
    const call = this.calls.at(-1);
    if (call === undefined) throw new Error('no watch yet');
    return call;
  }
}

function obj(name: string, resourceVersion: string): Obj {
  return { metadata: { name, namespace: 'ns', resourceVersion } };
}

const unavailable = (): ApiException<string> =>
  new ApiException(
    503,
    'Service Unavailable',
    '{"kind":"Status","reason":"ServiceUnavailable","code":503}',
    {},
  );

/** A 403 as client-node raises it, with the apiserver's Status body (forbiddenMessage). */
const forbidden = (): ApiException<string> =>
  new ApiException(
    403,
    'Forbidden',
    JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message:
        'pods is forbidden: User "system:serviceaccount:ns:cluster-manager" cannot list resource "pods" in API group "" in the namespace "ns"',
      details: { kind: 'pods' },
    }),
    {},
  );

function setup(
  options: { backoff?: { initialMs: number; maxMs: number }; lean?: (o: Obj) => Obj } = {},
) {
  const clock = new ManualClock();
  const watch = new FakeWatch();
  /** What each list call does, in order; the last one repeats. */
  const lists: (() => Promise<KubernetesListObject<Obj>>)[] = [];
  let listCalls = 0;
  const list = (): Promise<KubernetesListObject<Obj>> => {
    const next = lists[Math.min(listCalls, lists.length - 1)];
    listCalls++;
    if (next === undefined) throw new Error('no list answer scripted');
    return next();
  };
  const changes: (string | undefined)[] = [];
  const restarts: string[] = [];
  const warnings: { retryInMs: number; restarts: number; error: string }[] = [];
  const logger = pino(
    { level: 'warn' },
    {
      write: (line: string) => warnings.push(JSON.parse(line) as (typeof warnings)[number]),
    },
  );
  const informer = new ResilientInformer<Obj>({
    name: 'pods',
    path: '/api/v1/namespaces/ns/pods',
    list,
    watch,
    labelSelector: 'app=validator',
    onChange: (o) => changes.push(o?.metadata.name),
    logger,
    clock,
    onRestart: (name) => restarts.push(name),
    ...options,
  });
  return {
    clock,
    watch,
    lists,
    informer,
    changes,
    restarts,
    warnings,
    get listCalls() {
      return listCalls;
    },
  };
}

const listed =
  (rv: string, ...items: Obj[]) =>
  () =>
    Promise.resolve({
      apiVersion: 'v1',
      kind: 'PodList',
      metadata: { resourceVersion: rv },
      items,
    });
const failing = (error: Error) => () => Promise.reject(error);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('ResilientInformer', () => {
  it('caches what `lean` keeps of listed and watched objects; an ERROR event passes unchanged', async () => {
    const big = (name: string, rv: string) => ({
      ...obj(name, rv),
      spec: { large: 'x'.repeat(100) },
    });
    const t = setup({ lean: (o) => ({ metadata: o.metadata }) });
    t.lists.push(listed('10', big('validator-0', '9')));
    await t.informer.start();
    expect(t.informer.list()).toEqual([{ metadata: obj('validator-0', '9').metadata }]);
    t.watch.last.emit('ADDED', big('validator-1', '11'));
    t.watch.last.emit('MODIFIED', big('validator-0', '12'));
    expect(t.informer.list()).toEqual([
      { metadata: obj('validator-0', '12').metadata },
      { metadata: obj('validator-1', '11').metadata },
    ]);
    expect(t.changes).toEqual(['validator-0', 'validator-1', 'validator-0']);
    // client-node reads the Status of an ERROR event itself: `lean` must not see it.
    const seen: unknown[] = [];
    const t2 = setup({
      lean: (o) => {
        seen.push(o);
        return o;
      },
    });
    t2.lists.push(listed('10'));
    await t2.informer.start();
    t2.watch.last.emit('ERROR', { kind: 'Status', code: 410 } as unknown as Obj);
    expect(seen).toEqual([]);
  });

  it('lists, then watches from the list’s resourceVersion with the selector; changes reach the cache', async () => {
    const t = setup();
    t.lists.push(listed('10', obj('validator-0', '9')));
    await t.informer.start();
    expect(t.informer.synced).toBe(true);
    expect(t.informer.list().map((o) => o.metadata.name)).toEqual(['validator-0']);
    expect(t.watch.last).toMatchObject({
      path: '/api/v1/namespaces/ns/pods',
      query: { resourceVersion: '10', labelSelector: 'app=validator' },
    });
    t.watch.last.emit('ADDED', obj('validator-1', '11'));
    t.watch.last.emit('MODIFIED', obj('validator-0', '12'));
    t.watch.last.emit('DELETED', obj('validator-1', '13'));
    expect(t.informer.list().map((o) => o.metadata.name)).toEqual(['validator-0']);
    expect(t.informer.get('validator-0', 'ns')?.metadata.resourceVersion).toBe('12');
    expect(t.changes).toEqual(['validator-0', 'validator-1', 'validator-0', 'validator-1']);
    await t.informer.stop();
  });

  it('start() waits for a first successful list; failures back off 250 → 500 → 1000 → 2000 → 2000 ms', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5); // jitter factor 1.0
    const t = setup();
    t.lists.push(...Array.from({ length: 5 }, () => failing(unavailable())), listed('1'));
    let started = false;
    const start = t.informer.start().then(() => (started = true));
    await flush();
    for (const delay of [250, 500, 1000, 2000, 2000]) {
      const calls = t.listCalls;
      expect(started).toBe(false);
      expect(t.informer.synced).toBe(false);
      expect(t.informer.lastError).toBe('HTTP 503 ServiceUnavailable');
      await t.clock.advance(delay - 1);
      expect(t.listCalls).toBe(calls); // not before the delay
      await t.clock.advance(1);
      expect(t.listCalls).toBe(calls + 1);
    }
    await start;
    expect(started).toBe(true);
    expect(t.informer.lastError).toBeUndefined();
    expect(t.warnings.map((w) => w.retryInMs)).toEqual([250, 500, 1000, 2000, 2000]);
    expect(t.informer.restarts).toBe(5);
    expect(t.restarts).toEqual(['pods', 'pods', 'pods', 'pods', 'pods']);
    await t.informer.stop();
  });

  it('a 403 names the apiserver message and the missing rule, and is retried every 30 s, not at the backoff pace', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const t = setup();
    t.lists.push(failing(forbidden()), failing(forbidden()), listed('1'));
    let started = false;
    const start = t.informer.start().then(() => (started = true));
    await flush();
    expect(t.informer.lastError).toBe(
      'KUBE_FORBIDDEN: pods is forbidden: User "system:serviceaccount:ns:cluster-manager" cannot list resource "pods" in API group "" in the namespace "ns" (the Role needs a rule with apiGroups [""], resources ["pods"], verbs ["list"])',
    );
    await t.clock.advance(FORBIDDEN_RETRY_MS - 1);
    expect(t.listCalls).toBe(1);
    await t.clock.advance(1);
    expect(t.listCalls).toBe(2);
    await t.clock.advance(FORBIDDEN_RETRY_MS);
    await start;
    expect(started).toBe(true);
    expect(t.informer.lastError).toBeUndefined();
    expect(t.warnings.map((w) => w.retryInMs)).toEqual([FORBIDDEN_RETRY_MS, FORBIDDEN_RETRY_MS]);
    await t.informer.stop();
  });

  it('jitters each delay within ±20 %', async () => {
    // Random draws across the whole range, ends included (a real draw near 1 rounds to 1200: the
    // old `< 1200` bound failed about once in a few hundred runs).
    const draws = [0, 0.999999, 0.5, 0.25, 0.75];
    let draw = 0;
    vi.spyOn(Math, 'random').mockImplementation(() => draws[draw++ % draws.length]!);
    const t = setup({ backoff: { initialMs: 1000, maxMs: 1000 } });
    t.lists.push(failing(new Error('connect ECONNREFUSED')));
    void t.informer.start();
    await flush();
    for (let i = 0; i < 20; i++) await t.clock.advance(1200);
    const delays = t.warnings.map((w) => w.retryInMs);
    expect(delays.length).toBeGreaterThanOrEqual(17);
    for (const d of delays) expect(d >= 800 && d <= 1200).toBe(true); // rounded: 1199.9… is 1200
    expect(new Set(delays).size).toBeGreaterThan(1);
    await t.informer.stop();
  });

  it('a watch that fails after sync restarts from its resourceVersion, cache kept; a delivered event resets the backoff', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const t = setup();
    t.lists.push(listed('10', obj('validator-0', '9')));
    await t.informer.start();
    t.watch.last.emit('ADDED', obj('validator-1', '11'));

    t.watch.last.end(unavailable());
    await flush();
    expect(t.informer.restarts).toBe(1);
    expect(t.informer.list()).toHaveLength(2); // the cache is not cleared by an error
    await t.clock.advance(250);
    expect(t.watch.calls).toHaveLength(2);
    expect(t.watch.last.query.resourceVersion).toBe('11'); // no relist: resumes the stream
    expect(t.listCalls).toBe(1);

    t.watch.last.end(unavailable()); // again, without a delivery in between: 500 ms
    await flush();
    await t.clock.advance(499);
    expect(t.watch.calls).toHaveLength(2);
    await t.clock.advance(1);
    expect(t.watch.calls).toHaveLength(3);

    t.watch.last.emit('MODIFIED', obj('validator-1', '14')); // a delivery: back to 250 ms
    t.watch.last.end(unavailable());
    await flush();
    await t.clock.advance(250);
    expect(t.watch.calls).toHaveLength(4);
    expect(t.watch.last.query.resourceVersion).toBe('14');
    expect(t.warnings.map((w) => w.retryInMs)).toEqual([250, 500, 250]);
    await t.informer.stop();
  });

  it('410 Gone: relists at once, drops what is gone, and notifies the relist and each change', async () => {
    const t = setup();
    t.lists.push(listed('10', obj('validator-0', '9'), obj('validator-1', '9')), listed('50'));
    await t.informer.start();
    t.lists.splice(0, 2, listed('10'), listed('50', obj('validator-0', '40')));
    t.changes.length = 0;
    t.watch.last.end(Object.assign(new Error('Gone'), { statusCode: 410 }));
    await flush();
    expect(t.listCalls).toBe(2);
    expect(t.informer.restarts).toBe(0); // not an error: client-node's own relist
    expect(t.informer.list().map((o) => o.metadata.name)).toEqual(['validator-0']);
    expect(t.watch.last.query.resourceVersion).toBe('50');
    // The relist notice (undefined) comes as the list answers, before client-node applies it;
    // each change the relist brings (validator-1 deleted, validator-0 updated) is then notified
    // on its own, so a listener that reads the cache on every call ends up current.
    expect(t.changes).toEqual([undefined, 'validator-1', 'validator-0']);
    await t.informer.stop();
  });

  it('stop() cancels a pending restart and releases start()’s waiters; nothing is called after it', async () => {
    const t = setup();
    t.lists.push(failing(forbidden()));
    const start = t.informer.start();
    await flush();
    expect(t.clock.pendingTimers).toBe(1);
    const waiting = t.informer.waitSynced();
    await t.informer.stop();
    await expect(Promise.all([start, waiting])).resolves.toBeDefined();
    expect(t.clock.pendingTimers).toBe(0);
    const calls = t.listCalls;
    await t.clock.advance(60_000);
    expect(t.listCalls).toBe(calls);
    expect(t.informer.synced).toBe(false);
  });

  it('an error reported after stop() schedules nothing', async () => {
    const t = setup();
    t.lists.push(listed('1'));
    await t.informer.start();
    const { end } = t.watch.last;
    await t.informer.stop();
    end(forbidden());
    await flush();
    expect(t.informer.restarts).toBe(0);
    expect(t.clock.pendingTimers).toBe(0);
  });
});

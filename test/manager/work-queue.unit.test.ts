import { describe, expect, it } from 'vitest';
import { WorkQueue, type Outcome } from '../../src/manager/reconcile/work-queue.ts';
import { flush, ManualClock } from '../support/manual-clock.ts';

function setup(handler: (key: string, signal: AbortSignal) => Promise<Outcome>, concurrency = 2) {
  const clock = new ManualClock();
  const errors: { key: string; retryInMs: number }[] = [];
  const queue = new WorkQueue({
    concurrency,
    clock,
    handler,
    onError: (key, _error, retryInMs) => errors.push({ key, retryInMs }),
    backoff: { baseMs: 100, maxMs: 1_000 },
  });
  return { clock, queue, errors };
}

describe('WorkQueue', () => {
  it('merges a key added twice before it runs', async () => {
    const runs: string[] = [];
    const { queue } = setup(async (key) => void runs.push(key));
    queue.add('001');
    queue.add('001');
    queue.add('002');
    queue.start();
    await queue.drained();
    expect(runs.sort()).toEqual(['001', '002']);
  });

  it('never runs one key twice at once, and runs it again if it was added meanwhile', async () => {
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    let release: (() => void) | undefined;
    const { queue } = setup(async () => {
      active++;
      runs++;
      maxActive = Math.max(maxActive, active);
      if (runs === 1) await new Promise<void>((resolve) => (release = resolve));
      active--;
      return undefined;
    }, 4);
    queue.start();
    queue.add('001');
    await flush();
    queue.add('001');
    queue.add('001');
    await flush();
    expect(runs).toBe(1);
    release?.();
    await queue.drained();
    expect(runs).toBe(2);
    expect(maxActive).toBe(1);
  });

  it('bounds concurrency across keys', async () => {
    let active = 0;
    let maxActive = 0;
    const { queue } = setup(async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      await flush();
      active--;
      return undefined;
    }, 3);
    for (let i = 0; i < 10; i++) queue.add(String(i));
    queue.start();
    await queue.drained();
    expect(maxActive).toBe(3);
  });

  it('retries failures with capped exponential backoff and resets after a success', async () => {
    let calls = 0;
    const { queue, clock, errors } = setup(async () => {
      calls++;
      if (calls <= 5) throw new Error('boom');
      return undefined;
    });
    queue.start();
    queue.add('001');
    await flush();
    for (let i = 0; i < 5; i++) await clock.advance(1_000);
    expect(calls).toBe(6);
    expect(errors.map((e) => e.retryInMs)).toHaveLength(5);
    const [first, second, third, , fifth] = errors.map((e) => e.retryInMs);
    expect(first).toBeGreaterThanOrEqual(50);
    expect(first).toBeLessThanOrEqual(100);
    expect(second).toBeLessThanOrEqual(200);
    expect(third).toBeLessThanOrEqual(400);
    expect(fifth).toBeLessThanOrEqual(1_000);
    expect(fifth).toBeGreaterThanOrEqual(500);
    expect(queue.failures('001')).toBe(0);
  });

  it('requeues after the time a handler asks for, without growing the backoff', async () => {
    const times: number[] = [];
    const { queue, clock } = setup(async () => {
      times.push(clock.now());
      return times.length < 3 ? { requeueAfterMs: 5_000 } : undefined;
    });
    queue.start();
    queue.add('001');
    await flush();
    await clock.advance(4_999);
    expect(times).toHaveLength(1);
    await clock.advance(1);
    await clock.advance(5_000);
    expect(times.map((t) => t - (times[0] ?? 0))).toEqual([0, 5_000, 10_000]);
    expect(queue.failures('001')).toBe(0);
  });

  it('an earlier add replaces a later scheduled one', async () => {
    const times: number[] = [];
    const { queue, clock } = setup(async () => void times.push(clock.now()));
    queue.start();
    queue.addAfter('001', 10_000);
    queue.addAfter('001', 1_000);
    await clock.advance(1_000);
    expect(times).toHaveLength(1);
    await clock.advance(20_000);
    expect(times).toHaveLength(1);
  });

  it('cancels in-flight work at once', async () => {
    let aborted = false;
    const { queue } = setup(
      (_key, signal) =>
        new Promise<undefined>((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve(undefined);
          });
        }),
    );
    queue.start();
    queue.add('001');
    await flush();
    await queue.cancelAll();
    expect(aborted).toBe(true);
    expect(queue.inFlight).toBe(0);
  });
});

// The Runnables group (src/manager/runnable.ts): parts start in order and stop in reverse; a
// failing start stops what started (in reverse) and names the part; stop() is idempotent; a stop
// during a start stops the part being started, then what started, and starts nothing after it.
import { describe, expect, it } from 'vitest';
import { ManagerError } from '../../src/manager/errors.ts';
import { RunnableStartError, Runnables, type Runnable } from '../../src/manager/runnable.ts';

function recorder(): { log: string[]; part: (name: string, fail?: 'start' | 'stop') => Runnable } {
  const log: string[] = [];
  return {
    log,
    part: (name, fail) => ({
      name,
      start: () => {
        log.push(`start ${name}`);
        return fail === 'start' ? Promise.reject(new Error(`${name} broke`)) : Promise.resolve();
      },
      stop: () => {
        log.push(`stop ${name}`);
        return fail === 'stop' ? Promise.reject(new Error(`${name} stuck`)) : Promise.resolve();
      },
    }),
  };
}

describe('Runnables', () => {
  it('starts in order, stops in reverse, once', async () => {
    const { log, part } = recorder();
    const group = new Runnables([part('a'), part('b'), part('c')]);
    await group.start();
    await group.start();
    expect(group.started).toEqual(['a', 'b', 'c']);
    await Promise.all([group.stop(), group.stop()]);
    await group.stop();
    expect(log).toEqual(['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
    expect(group.started).toEqual([]);
  });

  it('a failing start stops what started, in reverse, and names the part', async () => {
    const { log, part } = recorder();
    const group = new Runnables([part('a'), part('b'), part('c', 'start'), part('d')]);
    const error: unknown = await group.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunnableStartError);
    expect(error).toBeInstanceOf(ManagerError);
    expect((error as RunnableStartError).part).toBe('c');
    expect((error as Error).message).toBe('c did not start: c broke');
    expect(((error as Error).cause as Error).message).toBe('c broke');
    expect(log).toEqual(['start a', 'start b', 'start c', 'stop b', 'stop a']);
    await group.stop();
    expect(log).toHaveLength(5);
  });

  it('keeps the cause’s catalogue code', async () => {
    const group = new Runnables([
      {
        name: 'discovery',
        start: () => Promise.reject(new ManagerError('KUBE_UNAVAILABLE', 'no API')),
        stop: () => Promise.resolve(),
      },
    ]);
    await expect(group.start()).rejects.toMatchObject({
      code: 'KUBE_UNAVAILABLE',
      part: 'discovery',
    });
  });

  it('stops every started part even when one stop fails, then throws that failure', async () => {
    const { log, part } = recorder();
    const group = new Runnables([part('a'), part('b', 'stop'), part('c')]);
    await group.start();
    await expect(group.stop()).rejects.toThrow('b stuck');
    expect(log.slice(3)).toEqual(['stop c', 'stop b', 'stop a']);
  });

  it('a stop during a start stops that part, starts nothing more, and stops what started', async () => {
    const { log, part } = recorder();
    let release = (): void => undefined;
    let seen: AbortSignal | undefined;
    // A start that only ends when its part is stopped (discovery waiting for caches that never
    // sync, say).
    const waiting: Runnable = {
      name: 'waiting',
      start: (signal) => {
        seen = signal;
        log.push('start waiting');
        return new Promise((_resolve, reject) => {
          release = () => reject(new Error('stopped before it synced'));
        });
      },
      stop: () => {
        log.push('stop waiting');
        release();
        return Promise.resolve();
      },
    };
    const group = new Runnables([part('first'), waiting, part('after')]);
    const starting = group.start();
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['start first', 'start waiting']);
    await group.stop();
    expect(seen?.aborted).toBe(true);
    // Ended by the stop, not failed.
    await expect(starting).resolves.toBeUndefined();
    expect(log).toEqual(['start first', 'start waiting', 'stop waiting', 'stop first']);
    expect(group.started).toEqual([]);
  });

  it('a part whose start ends as it is stopped is stopped once', async () => {
    const { log, part } = recorder();
    let release = (): void => undefined;
    const slow: Runnable = {
      name: 'slow',
      start: () => {
        log.push('start slow');
        return new Promise((resolve) => {
          release = resolve;
        });
      },
      stop: () => {
        log.push('stop slow');
        release();
        return Promise.resolve();
      },
    };
    const group = new Runnables([slow, part('after')]);
    const starting = group.start();
    await new Promise((resolve) => setImmediate(resolve));
    await group.stop();
    await starting;
    expect(log).toEqual(['start slow', 'stop slow']);
  });

  it('refuses two parts of one name', () => {
    const { part } = recorder();
    expect(() => new Runnables([part('a'), part('a')])).toThrow('two runnables are named "a"');
  });
});

// `cluster-manager run`'s end (cli/stop-on-signals.ts) over a fake signal source: a Ctrl-C in
// `npm start` gives the manager SIGINT and, a moment later, its supervisor's SIGTERM. The second
// used to find no handler (removed at the first), and Node's default action killed the manager
// halfway through its stop.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { stopOnSignals, type Stoppable } from '../../src/manager/cli/stop-on-signals.ts';

function rig(): {
  service: Stoppable;
  signals: EventEmitter;
  logged: string[];
  stops: number;
  finishStop: () => void;
  fail: (error: Error) => void;
} {
  const logged: string[] = [];
  let finish: () => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const state = { stops: 0 };
  const service: Stoppable = {
    stop: () => {
      state.stops++;
      return new Promise<void>((resolve) => (finish = resolve));
    },
    failed: new Promise<never>((_resolve, reject) => (fail = reject)),
    logger: { info: (fields, message) => logged.push(`${JSON.stringify(fields)} ${message}`) },
  };
  return {
    service,
    signals: new EventEmitter(),
    logged,
    get stops() {
      return state.stops;
    },
    finishStop: () => finish(),
    fail: (error) => fail(error),
  };
}

describe('stopOnSignals', () => {
  it('SIGINT then SIGTERM during the stop: one stop, the second signal handled (not the default)', async () => {
    const r = rig();
    const ended = stopOnSignals(r.service, r.signals);
    r.signals.emit('SIGINT', 'SIGINT');
    r.signals.emit('SIGTERM', 'SIGTERM');
    r.signals.emit('SIGINT', 'SIGINT');
    expect(r.stops).toBe(1);
    // While the stop runs a handler stays on each signal: Node's default never applies.
    expect(r.signals.listenerCount('SIGTERM')).toBe(1);
    expect(r.signals.listenerCount('SIGINT')).toBe(1);
    expect(r.logged).toEqual([
      '{"signal":"SIGINT"} shutting down',
      '{"signal":"SIGTERM"} already shutting down; the signal changes nothing',
      '{"signal":"SIGINT"} already shutting down; the signal changes nothing',
    ]);
    r.finishStop();
    await expect(ended).resolves.toBeUndefined();
    expect(r.signals.listenerCount('SIGTERM')).toBe(0);
    expect(r.signals.listenerCount('SIGINT')).toBe(0);
  });

  it('a service that fails stops once and ends with its error; a signal meanwhile changes nothing', async () => {
    const r = rig();
    const ended = stopOnSignals(r.service, r.signals);
    r.fail(new Error('the API server refused'));
    await new Promise((resolve) => setImmediate(resolve));
    r.signals.emit('SIGTERM', 'SIGTERM');
    expect(r.stops).toBe(1);
    r.finishStop();
    await expect(ended).resolves.toMatchObject({ message: 'the API server refused' });
  });
});

describe('stopOnSignals: a stop that fails', () => {
  it('ends with the stop’s error (it neither hangs nor leaves the rejection unhandled)', async () => {
    const signals = new EventEmitter();
    const service: Stoppable = {
      stop: () => Promise.reject(new Error('journal close failed')),
      failed: new Promise<never>(() => undefined),
      logger: { info: () => undefined },
    };
    const ended = stopOnSignals(service, signals);
    signals.emit('SIGTERM', 'SIGTERM');
    const outcome = await Promise.race([
      ended.then((e) => e?.message ?? 'clean'),
      new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 1_000)),
    ]);
    expect(outcome).toBe('journal close failed');
    expect(signals.listenerCount('SIGTERM')).toBe(0);
  });
  it('SIGHUP (the terminal closed) stops it like SIGTERM; no handler is left after', async () => {
    const r = rig();
    const ended = stopOnSignals(r.service, r.signals);
    expect(r.signals.listenerCount('SIGHUP')).toBe(1);
    r.signals.emit('SIGHUP', 'SIGHUP');
    expect(r.stops).toBe(1);
    expect(r.logged).toEqual(['{"signal":"SIGHUP"} shutting down']);
    r.finishStop();
    await expect(ended).resolves.toBeUndefined();
    expect(r.signals.listenerCount('SIGHUP')).toBe(0);
  });
});

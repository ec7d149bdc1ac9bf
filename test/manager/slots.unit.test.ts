// Slots: at most `size` holders, waiters served in order, an aborted waiter leaves the line.
import { describe, expect, it } from 'vitest';
import { Slots } from '../../src/manager/slots.ts';

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('Slots', () => {
  it('lets at most `size` run, hands each freed slot to the next waiter in order', async () => {
    const slots = new Slots(2);
    const gates = [gate(), gate(), gate(), gate()];
    const started: number[] = [];
    const runs = gates.map((g, i) =>
      slots.run(async () => {
        started.push(i);
        await g.promise;
        return i;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect(slots.held).toBe(2);
    gates[1]?.open();
    await runs[1];
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 2]);
    expect(slots.held).toBe(2);
    for (const g of gates) g.open();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3]);
    expect(slots.held).toBe(0);
  });

  it('releases the slot when the work throws', async () => {
    const slots = new Slots(1);
    await expect(slots.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(slots.held).toBe(0);
    expect(await slots.run(() => Promise.resolve('next'))).toBe('next');
  });

  it('drops an aborted waiter from the line (it never runs) and rejects with the reason', async () => {
    const slots = new Slots(1);
    const first = gate();
    const running = slots.run(() => first.promise);
    const controller = new AbortController();
    let ran = false;
    const waiting = slots.run(async () => {
      ran = true;
    }, controller.signal);
    const reason = new Error('stopped');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    first.open();
    await running;
    expect(ran).toBe(false);
    expect(slots.held).toBe(0);
    await expect(slots.run(() => Promise.resolve(), controller.signal)).rejects.toBe(reason);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses a size of %s', (size) => {
    expect(() => new Slots(size)).toThrow(RangeError);
  });
});

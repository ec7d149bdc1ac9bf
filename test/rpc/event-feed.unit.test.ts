// The event stream's backpressure (src/manager/rpc/event-feed.ts) against a fake connection: a
// client that reads gets every event in order, one write at a time, however slowly it drains; a
// client that stops reading is dropped with SLOW_CLIENT once it is too far behind, and gets
// nothing more. No socket: the fake connection says when it is full and when it drains.
import { describe, expect, it } from 'vitest';
import { DropReason, EventFeed, type FeedMessage } from '../../src/manager/rpc/event-feed.ts';

/** A connection whose socket holds `capacity` bytes: a write past it waits for `drain()`. */
class FakeConnection {
  readonly written: FeedMessage[] = [];
  buffered = 0;
  destroyed = false;
  inFlight = 0;
  maxInFlight = 0;
  #drained: (() => void)[] = [];

  readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  send(message: FeedMessage): Promise<void> {
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.written.push(message);
    this.buffered += JSON.stringify(message).length;
    if (this.buffered <= this.capacity) {
      this.inFlight -= 1;
      return Promise.resolve();
    }
    // write() answered false: the next write waits for 'drain'.
    return new Promise((resolve) =>
      this.#drained.push(() => {
        this.inFlight -= 1;
        resolve();
      }),
    );
  }

  /** The client read everything buffered. */
  async drain(): Promise<void> {
    this.buffered = 0;
    const waiting = this.#drained.splice(0);
    for (const resume of waiting) resume();
    await flush();
  }
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function feedOver(connection: FakeConnection, maxUnsentBytes: number) {
  const drops: { reason: DropReason; unsent: number }[] = [];
  const feed = new EventFeed({
    sink: {
      send: (message) => connection.send(message),
      unsentBytes: () => connection.buffered,
      destroy: () => (connection.destroyed = true),
    },
    maxUnsentBytes,
    onDrop: (reason, unsent) => drops.push({ reason, unsent }),
  });
  return { feed, drops };
}

const height = (h: number): FeedMessage => ({ event: 'height', data: { height: h } });

describe('EventFeed', () => {
  it('writes every event in order when the client keeps up', async () => {
    const connection = new FakeConnection(1_000_000);
    const { feed, drops } = feedOver(connection, 10_000);
    for (let h = 1; h <= 50; h++) feed.push(height(h));
    await flush();
    expect(connection.written.map((m) => (m.data as { height: number }).height)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    expect(drops).toEqual([]);
  });

  it('waits for drain before the next write, and delivers everything to a slow reader', async () => {
    const connection = new FakeConnection(100);
    const { feed, drops } = feedOver(connection, 10_000);
    for (let h = 1; h <= 20; h++) feed.push(height(h));
    await flush();
    // The socket is full: one write is waiting for 'drain', the rest wait in the feed.
    expect(connection.written.length).toBeLessThan(20);
    expect(feed.queuedBytes).toBeGreaterThan(0);
    for (let round = 0; round < 20 && connection.written.length < 20; round++)
      await connection.drain();
    expect(connection.written.map((m) => (m.data as { height: number }).height)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    expect(connection.maxInFlight).toBe(1);
    expect(drops).toEqual([]);
    expect(connection.destroyed).toBe(false);
  });

  it('drops a client that stops reading once it is maxUnsentBytes behind, naming SLOW_CLIENT', async () => {
    const connection = new FakeConnection(200);
    const { feed, drops } = feedOver(connection, 1_000);
    for (let h = 1; h <= 200; h++) feed.push(height(h));
    await flush();
    expect(drops).toHaveLength(1);
    expect(drops[0]!.reason).toBe(DropReason.slowClient);
    expect(drops[0]!.unsent).toBeLessThanOrEqual(1_000);
    expect(feed.dropped).toBe('SLOW_CLIENT');
    expect(connection.destroyed).toBe(true);
    // Nothing more is queued or written for it.
    const written = connection.written.length;
    feed.push(height(999));
    await connection.drain();
    expect(connection.written.length).toBe(written);
    expect(feed.queuedBytes).toBe(0);
  });

  it('does not drop a client that falls behind and catches up within the bound', async () => {
    const connection = new FakeConnection(200);
    const { feed, drops } = feedOver(connection, 2_000);
    for (let burst = 0; burst < 10; burst++) {
      for (let h = 0; h < 10; h++) feed.push(height(burst * 10 + h));
      await flush();
      while (feed.queuedBytes > 0 || connection.buffered > connection.capacity)
        await connection.drain();
    }
    expect(drops).toEqual([]);
    expect(connection.written).toHaveLength(100);
  });
});

// freeLoopbackPorts (src/kube-emulator/loopback-ports.ts) against the real kernel: the ports are
// distinct, free, outside the ephemeral range, and a taken candidate is skipped.
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  candidateRanges,
  ephemeralRange,
  freeLoopbackPorts,
} from '../../src/kube-emulator/loopback-ports.ts';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

function listenOn(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

describe('freeLoopbackPorts', () => {
  it('gives distinct ports outside the ephemeral range that can be listened on', async () => {
    const [low, high] = ephemeralRange();
    const ports = await freeLoopbackPorts(12);
    expect(new Set(ports).size).toBe(12);
    for (const port of ports) {
      expect(port < low || port > high, `${port} in ${low}–${high}`).toBe(true);
      servers.push(await listenOn(port));
    }
  });

  it('skips a candidate someone listens on', async () => {
    const [taken] = await freeLoopbackPorts(1);
    servers.push(await listenOn(taken!));
    // The first pick is made to land on the taken port; the answer must be another one.
    const ranges = candidateRanges(ephemeralRange());
    const size = ranges.reduce((sum, [from, to]) => sum + to - from + 1, 0);
    let index = 0;
    for (const [from, to] of ranges) {
      if (taken! >= from && taken! <= to) index += taken! - from;
      else if (taken! > to) index += to - from + 1;
    }
    const picks: number[] = [];
    const random = (): number => {
      picks.push(picks.length);
      return picks.length === 1 ? (index + 0.5) / size : Math.random();
    };
    const [port] = await freeLoopbackPorts(1, { random });
    expect(picks.length).toBeGreaterThan(1);
    expect(port).not.toBe(taken);
  });
});

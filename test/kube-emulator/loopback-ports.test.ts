// freeLoopbackPorts (src/kube-emulator/kubelets/loopback-ports.ts) against the real kernel: the ports are
// distinct, free, outside the ephemeral range, and a taken candidate is skipped.
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  candidateRanges,
  ephemeralRange,
  freeLoopbackPorts,
} from '../../src/kube-emulator/kubelets/loopback-ports.ts';

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

/** A `random` whose every pick lands on `port` (freeLoopbackPorts picks among the candidates). */
function alwaysPicking(port: number): () => number {
  const ranges = candidateRanges(ephemeralRange());
  const size = ranges.reduce((sum, [from, to]) => sum + to - from + 1, 0);
  let index = 0;
  for (const [from, to] of ranges) {
    if (port >= from && port <= to) index += port - from;
    else if (port > to) index += to - from + 1;
  }
  return () => (index + 0.5) / size;
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
    const first = alwaysPicking(taken!);
    const picks: number[] = [];
    const random = (): number => {
      picks.push(picks.length);
      return picks.length === 1 ? first() : Math.random();
    };
    const [port] = await freeLoopbackPorts(1, { random });
    expect(picks.length).toBeGreaterThan(1);
    expect(port).not.toBe(taken);
  });

  it('never gives a port it is told to avoid (one chosen earlier that nothing listens on yet)', async () => {
    const [earlier] = await freeLoopbackPorts(1);
    // Every pick lands on `earlier`: skipped each time, then a kernel-chosen port instead.
    const ports = await freeLoopbackPorts(3, {
      random: alwaysPicking(earlier!),
      avoid: new Set([earlier!]),
    });
    expect(ports).toHaveLength(3);
    expect(ports).not.toContain(earlier);
    expect(new Set(ports).size).toBe(3);
  });
});

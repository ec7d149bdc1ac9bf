// Free loopback ports for processes that will listen on them later (a pod's host ports, a
// devnet's genesis addresses), chosen outside the kernel's ephemeral port range.
//
// Why not `listen(0)` and close: the kernel then hands out a port of its ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range, 32768–60999 by default), the same range every later
// `listen(0)` and every outgoing connection takes its local port from. Between our close and the
// node's listen, the manager's own `listen(0)` or a keep-alive client socket can take that very
// port and hold it for the life of the devnet: the pod then fails with EADDRINUSE on every
// restart (seen on this machine: a devnet whose fourth validator crash-looped for 60 s). A port
// below the range is never handed out by the kernel; only another explicit choice like this one
// can take it: it checks by binding, and a caller names the ports it chose earlier but has not
// listened on yet (`avoid`).
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

/** Ports below this are left alone (well-known and registered services people run). */
const LOWEST = 10_000;
const TRIES_PER_PORT = 50;

/** The kernel's ephemeral range, or Linux's default where it cannot be read. */
export function ephemeralRange(
  read: () => string = () => readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8'),
): [number, number] {
  try {
    const [low = NaN, high = NaN] = read().trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high) && low <= high) return [low, high];
  } catch {
    // Not Linux, or no /proc: fall through to the default.
  }
  return [32_768, 60_999];
}

/** The ports we choose from: above LOWEST and outside the ephemeral range. */
export function candidateRanges([low, high]: [number, number]): [number, number][] {
  const ranges: [number, number][] = [];
  if (low - 1 >= LOWEST) ranges.push([LOWEST, low - 1]);
  if (high + 1 <= 65_535) ranges.push([Math.max(LOWEST, high + 1), 65_535]);
  return ranges.filter(([from, to]) => to >= from);
}

function pick(ranges: [number, number][], random: () => number): number | undefined {
  const size = ranges.reduce((sum, [from, to]) => sum + to - from + 1, 0);
  if (size === 0) return undefined;
  let index = Math.floor(random() * size);
  for (const [from, to] of ranges) {
    if (index <= to - from) return from + index;
    index -= to - from + 1;
  }
  return undefined;
}

function portOf(server: Server): number {
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

function listen(port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/**
 * `count` distinct ports free on 127.0.0.1 now, held open together while they are chosen so that
 * they differ, then released for their owners to listen on. Falls back to a kernel-chosen port
 * only when no candidate outside the ephemeral range was free after many tries.
 */
export async function freeLoopbackPorts(
  count: number,
  options: {
    random?: () => number;
    range?: [number, number];
    /** Ports never to give: chosen earlier for a process that has not listened yet. */
    avoid?: ReadonlySet<number>;
  } = {},
): Promise<number[]> {
  const ranges = candidateRanges(options.range ?? ephemeralRange());
  const random = options.random ?? Math.random;
  const avoid = options.avoid ?? new Set<number>();
  const held: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      let server: Server | undefined;
      for (let attempt = 0; server === undefined && attempt < TRIES_PER_PORT; attempt++) {
        const port = pick(ranges, random);
        if (port === undefined) break;
        if (!avoid.has(port)) server = await listen(port);
      }
      for (let attempt = 0; server === undefined && attempt < TRIES_PER_PORT; attempt++) {
        const fallback = await listen(0);
        if (fallback !== undefined && avoid.has(portOf(fallback))) {
          held.push(fallback); // held, so the kernel offers another; closed with the rest
          continue;
        }
        server = fallback;
      }
      if (server === undefined) throw new Error('no free loopback port: even port 0 failed');
      held.push(server);
    }
    return held.map(portOf).filter((port) => !avoid.has(port));
  } finally {
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

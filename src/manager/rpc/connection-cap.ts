// The control server's connections, capped (issue 30 item 9: 19,990 idle connections used the
// pod's file descriptors, 20,000, and the control RPC stalled ~50 s with no log line). Past the
// cap the oldest connection that has not sent a request is closed, not the new one: a client that
// asks gets answered while idle sockets pile up, and a warning says the cap was hit (once per
// episode, again after the count fell below the cap). A connection that has sent a request (a
// `scale --wait`, an event stream) is never closed for this; if all are busy the new one is.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../logger.ts';

/**
 * Connections kept at most by default (well below the file-descriptor limit a pod is given);
 * CM_RPC_MAX_CONNECTIONS sets it (config.ts).
 */
export const MAX_CONNECTIONS = 1_024;
/**
 * A connection that has begun a request and not sent all its headers by then is answered 408 and
 * closed (Node's default 60 s); CM_RPC_HEADERS_TIMEOUT sets it (config.ts). A connection that
 * sends nothing at all is not timed by Node (node:http checks only requests begun): the cap
 * above closes those.
 */
export const HEADERS_TIMEOUT_MS = 10_000;
/**
 * How often Node looks for requests past the headers timeout (`connectionsCheckingInterval`,
 * 30 s by default: a 1 s timeout measured on this machine closed a stalled request after 30.0 s).
 */
export const HEADERS_CHECK_INTERVAL_MS = 1_000;

/** The limits, as CM_RPC_MAX_CONNECTIONS and CM_RPC_HEADERS_TIMEOUT give them. */
export interface ConnectionLimits {
  /** At least 1 (config.ts refuses less). */
  readonly max: number;
  /** At least 1 s: Node reads 0 as no timeout at all (config.ts refuses it). */
  readonly headersTimeoutMs: number;
}

/** Installs the cap on `server`; returns how many connections it closed so far. */
export function capConnections(
  server: Server,
  logger: Logger,
  limits: ConnectionLimits = { max: MAX_CONNECTIONS, headersTimeoutMs: HEADERS_TIMEOUT_MS },
): { closed(): number } {
  const { max } = limits;
  server.headersTimeout = limits.headersTimeoutMs;
  // Streams and waits are long: no request timeout. headersTimeout covers requests begun and
  // stalled; silent connections are the cap's (below).
  server.requestTimeout = 0;
  const open = new Set<Socket>();
  const asked = new WeakSet<Socket>();
  let closed = 0;
  let warned = false;
  server.on('request', (req: { socket: Socket }) => asked.add(req.socket));
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      if (open.size < max) warned = false;
    });
    if (open.size <= max) return;
    let victim: Socket = socket;
    for (const s of open) {
      if (!asked.has(s)) {
        victim = s;
        break;
      }
    }
    open.delete(victim);
    victim.destroy();
    closed++;
    if (!warned) {
      warned = true;
      logger.warn(
        { max, open: open.size },
        `control RPC: more than ${max} connections; closing the oldest that sent no request`,
      );
    }
  });
  return { closed: () => closed };
}

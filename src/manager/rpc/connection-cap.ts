// The control server's connections, capped (issue 30 item 9: 19,990 idle connections used the
// pod's file descriptors, 20,000, and the control RPC stalled ~50 s with no log line). Past the
// cap the oldest connection that has not sent a request is closed, not the new one: a client that
// asks gets answered while idle sockets pile up, and a warning says the cap was hit (once per
// episode, again after the count fell below the cap). A connection that has sent a request (a
// `scale --wait`, an event stream) is never closed for this; if all are busy the new one is.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../logger.ts';

/** Connections kept at most (well below the file-descriptor limit a pod is given). */
export const MAX_CONNECTIONS = 1_024;
/** A connection that has not sent its request headers by then is closed (Node's default 60 s). */
export const HEADERS_TIMEOUT_MS = 10_000;

/** Installs the cap on `server`; returns how many connections it closed so far. */
export function capConnections(
  server: Server,
  logger: Logger,
  max: number = MAX_CONNECTIONS,
): { closed(): number } {
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = 0; // streams and waits are long; headersTimeout covers the idle ones
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

// Free loopback ports, reserved before anything binds them (genesis must name the validators'
// p2p addresses before their processes start).
import { createServer } from 'node:net';
import { freeLoopbackPorts } from '../kube-emulator/index.ts';

/**
 * Finds `count` distinct free ports on 127.0.0.1, outside the kernel's ephemeral range so that no
 * `listen(0)` or outgoing connection takes one before its node listens (loopback-ports.ts), and
 * none of `avoid` (ports chosen earlier that nothing listens on yet).
 */
export function freePorts(count: number, avoid: Iterable<number> = []): Promise<number[]> {
  return freeLoopbackPorts(count, { avoid: new Set(avoid) });
}

/** True when nothing listens on `port` at 127.0.0.1. */
export async function isPortFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

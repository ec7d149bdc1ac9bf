// Free loopback ports, reserved before anything binds them (genesis must name the validators'
// p2p addresses before their processes start).
import { createServer, type Server } from 'node:net';

/** Finds `count` distinct free ports on 127.0.0.1 (held open together so they differ). */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
    }
    return servers.map((server) => {
      const address = server.address();
      return typeof address === 'object' && address !== null ? address.port : 0;
    });
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** True when nothing listens on `port` at 127.0.0.1. */
export async function isPortFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

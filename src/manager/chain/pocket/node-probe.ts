// Static discovery's generic readiness check on a Pocket V1 node: ready while it answers its
// health query (`GET /v1/health`, 200) and its height query (`GET /v1/query/height`) in time.
import { PocketRpcClient } from '../../../pocket/index.ts';
import type { NodeProbe } from '../port.ts';

export function pocketNodeProbe(timeoutMs = 2_000): NodeProbe {
  const clients = new Map<string, PocketRpcClient>();
  return async (rpcUrl, signal) => {
    let client = clients.get(rpcUrl);
    if (client === undefined) {
      client = new PocketRpcClient({ baseUrl: rpcUrl, timeoutMs });
      clients.set(rpcUrl, client);
    }
    if (!(await client.isHealthy({ signal, timeoutMs })))
      throw new Error('GET /v1/health did not answer 200');
    await client.height({ signal, timeoutMs });
  };
}

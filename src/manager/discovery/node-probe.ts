// Static discovery's generic readiness check: a node is ready while it answers its health query
// (`GET /v1/health`, 200) and its height query (`GET /v1/query/height`) within the timeout.
import { PocketRpcClient } from '../../pocket/index.ts';

/** Resolves when the node at `rpcUrl` is ready; rejects with the reason when it is not. */
export type NodeProbe = (rpcUrl: string, signal: AbortSignal) => Promise<void>;

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

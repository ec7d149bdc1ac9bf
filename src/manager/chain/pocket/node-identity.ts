// Which key a validator's node signs with, asked of the node itself (issue 30: "read from the
// node, not inferred from the Secret"). Pocket V1's RPC names no key (rpc/handlers.go: health,
// version, consensus state — height, round, step — and queries of the chain). The node's identity
// is on its P2P port: V1 builds its libp2p host from the validator's own private key
// (p2p/module.go:85-95, `libp2p.Identity`; `GetAddress`, 271-274), so a peer's handshake shows its
// public key, hence its address. The stand-in, which speaks JSON over HTTP where V1 speaks libp2p
// (the transport debug-message.ts uses for V1's DebugMessage), answers the same question at
// `GET http://<service_url>/p2p/v1/status` (`{"address": …}`). A node that cannot be asked (a
// real V1 P2P port, which speaks libp2p only) answers nothing here, and the manager falls back to
// what the start times tell (planner/signers.ts).

/** One question's time limit. */
const READ_TIMEOUT_MS = 2_000;
const ADDRESS = /^[0-9a-f]{40}$/;

/**
 * The address the node at `serviceUrl` (`host:port`, as staked) signs with; undefined when it
 * runs without a key. Throws when the node does not answer or answers something else.
 */
export async function readNodeAddress(
  serviceUrl: string,
  signal: AbortSignal,
): Promise<string | undefined> {
  const base = /^[a-z]+:\/\//i.test(serviceUrl)
    ? serviceUrl.replace(/^tcp:\/\//i, 'http://')
    : `http://${serviceUrl}`;
  const response = await fetch(`${base.replace(/\/+$/, '')}/p2p/v1/status`, {
    signal: AbortSignal.any([signal, AbortSignal.timeout(READ_TIMEOUT_MS)]),
  });
  const text = await response.text();
  if (response.status !== 200)
    throw new Error(`GET /p2p/v1/status answered HTTP ${response.status}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error('GET /p2p/v1/status did not answer JSON');
  }
  const address = (body as { address?: unknown } | null)?.address;
  if (address === null) return undefined;
  if (typeof address !== 'string' || !ADDRESS.test(address))
    throw new Error('GET /p2p/v1/status answered no address');
  return address;
}

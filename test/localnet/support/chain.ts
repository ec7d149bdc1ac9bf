// Helpers for tests that drive a localnet through its RPC: trigger views, build transactions.
import {
  PocketRpcClient,
  signTransaction,
  stakeMessage,
  unstakeMessage,
  type Block,
  type SignedTransaction,
  type ValidatorKey,
} from '../../../src/pocket/index.ts';

export function client(rpcUrl: string): PocketRpcClient {
  return new PocketRpcClient({ baseUrl: rpcUrl, timeoutMs: 20_000 });
}

/** `POST /v1/debug/trigger_view?wait=true`: the status and the node's committed height after. */
export async function triggerView(
  rpcUrl: string,
  timeoutMs = 10_000,
): Promise<{ status: number; height: number }> {
  const response = await fetch(
    `${rpcUrl}/v1/debug/trigger_view?wait=true&timeout_ms=${timeoutMs}`,
    { method: 'POST', signal: AbortSignal.timeout(timeoutMs + 5_000) },
  );
  const body = (await response.json()) as { height: number };
  return { status: response.status, height: body.height };
}

export function stakeTx(
  key: ValidatorKey,
  serviceUrl: string,
  amount = '15100000000',
): SignedTransaction {
  return signTransaction({
    key,
    message: stakeMessage({
      publicKey: key.publicKey,
      amount,
      chains: ['0001'],
      serviceUrl,
      outputAddress: key.addressBytes,
      signer: key.addressBytes,
    }),
  });
}

export function unstakeTx(key: ValidatorKey): SignedTransaction {
  return signTransaction({
    key,
    message: unstakeMessage({ address: key.addressBytes, signer: key.addressBytes }),
  });
}

/** Addresses in a block's quorum certificate. */
export function signers(block: Block): string[] {
  return (block.block_header.quorum_cert.threshold_sig.signatures ?? []).map((s) => s.address);
}

/** Block hash (the certificate's `block` field) at every height 1…h on one node. */
export async function blockHashes(rpcUrl: string, upTo: number): Promise<string[]> {
  const rpc = client(rpcUrl);
  const hashes: string[] = [];
  for (let h = 1; h <= upTo; h++) hashes.push((await rpc.block(h)).block_header.quorum_cert.block);
  return hashes;
}

/**
 * V1's way to trigger a view: a `DebugMessage` sent to each validator's p2p address (what
 * `p1 Debug TriggerView` does over libp2p; the stand-in takes it as JSON over HTTP).
 */
export async function sendDebugMessage(
  p2pAddresses: readonly string[],
  action = 'DEBUG_CONSENSUS_TRIGGER_NEXT_VIEW',
): Promise<void> {
  await Promise.all(
    p2pAddresses.map(async (address) => {
      const response = await fetch(`http://${address}/p2p/v1/debug-message`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ action, type: 'DEBUG_MESSAGE_TYPE_BROADCAST' }),
      });
      await response.arrayBuffer();
    }),
  );
}

/**
 * Resolves once every node's mempool holds `hash`: a trigger can reach the round's leader
 * before gossip does, and then the next block would not include the transaction. Works against
 * V1's answers too (found, then 135).
 */
export async function inEveryMempool(rpcUrls: readonly string[], hash: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (const url of rpcUrls) {
    while (!(await client(url).mempoolEntry(hash)).inMempool) {
      if (Date.now() > deadline) throw new Error(`transaction ${hash} did not reach ${url}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/**
 * V1's way to the next block: `p1 Debug TriggerView` (a debug message to each of `p2pAddresses`)
 * until every node of `rpcUrls` holds one more block, the height it reached. Views are sent again
 * only while no node has the block (a view sent after some committed it would start the next
 * height there); with every voter but the leader needed in one round (V1's four validators), a
 * round may split and take another view.
 */
export async function nextV1Block(
  p2pAddresses: readonly string[],
  rpcUrls: readonly string[],
  options: { timeoutMs?: number; retryMs?: number } = {},
): Promise<number> {
  const heights = () => Promise.all(rpcUrls.map((url) => client(url).height()));
  const before = Math.min(...(await heights()));
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let last: number[] = [];
  let sentAt = -Infinity;
  while (Date.now() < deadline) {
    last = await heights();
    if (last.every((h) => h > before)) return Math.min(...last);
    if (last.every((h) => h === before) && Date.now() - sentAt >= (options.retryMs ?? 1_200)) {
      await sendDebugMessage(p2pAddresses);
      sentAt = Date.now();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no block ${before + 1} on every node (heights ${last.join(',')})`);
}

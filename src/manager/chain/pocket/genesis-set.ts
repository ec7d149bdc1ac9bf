// Which validators the genesis set staked, read from a Pocket V1 chain (for the minimum set's
// default, a quorum of the genesis set, and on V1, which has no state sync, the only validators
// that vote: consensus/module.go:158-169 builds its id map from the genesis). V1's queries take a height but no "genesis" (height 0
// means the latest), so this reads the rows at height 1 and leaves out those whose stake committed
// in block 1 itself: the active set of height 1 is the genesis set, so none of them signed block
// 1's certificate. A genesis validator that edited its stake in block 1 and was not in that
// certificate would be left out too: the minimum comes out lower by one, never higher.
import type { PocketRpcClient } from '../../../pocket/index.ts';

export async function readGenesisValidators(
  rpc: Pick<PocketRpcClient, 'height' | 'validators' | 'block'>,
): Promise<string[]> {
  const rows = await rpc.validators({ height: 1, timeoutMs: 10_000 });
  const staked = new Set(
    rows.filter((r) => r.unstaking_height < 0 && r.paused_height < 0).map((r) => r.address),
  );
  if ((await rpc.height({ timeoutMs: 5_000 })) < 1) return [...staked].sort();
  const block = await rpc.block(1, { timeoutMs: 10_000 });
  const signers = new Set(
    (block.block_header.quorum_cert.threshold_sig.signatures ?? []).map((s) => s.address),
  );
  for (const tx of block.transactions ?? [])
    if (tx.message_type === 'MessageStake' && tx.result_code === 0 && !signers.has(tx.signer_addr))
      staked.delete(tx.signer_addr);
  return [...staked].sort();
}

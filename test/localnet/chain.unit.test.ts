// What a node checks before it applies a block it did not vote on: the quorum certificate
// against the set it computes itself, and a re-execution that must reproduce the header.
import { describe, expect, it } from 'vitest';
import {
  admitTransaction,
  generateKeys,
  signTransaction,
  stakeMessage,
  verifyEd25519Native,
} from '../../src/pocket/index.ts';
import type { QuorumCert } from '../../src/localnet/block.ts';
import { Chain } from '../../src/localnet/chain.ts';
import { buildBlock, executeBlock, type Execution } from '../../src/localnet/execute.ts';
import { buildGenesis } from '../../src/localnet/genesis.ts';
import { signVote, VoteKind } from '../../src/localnet/votes.ts';

const keys = generateKeys({ count: 5, seed: 'chain-test' });
const validators = ['001', '002', '003', '004'].map((id) => keys.get(id)!);
const joiner = keys.get('005')!;

function setup(): { chain: Chain; execution: Execution } {
  const chain = new Chain(buildGenesis({ keys, validators: 4 }), verifyEd25519Native);
  const stake = signTransaction({
    key: joiner,
    message: stakeMessage({
      publicKey: joiner.publicKey,
      amount: '15100000000',
      chains: [],
      serviceUrl: 'h:1',
      outputAddress: joiner.addressBytes,
    }),
  });
  const execution = buildBlock(chain.executionBase(), {
    candidates: [{ raw: stake.hex, tx: admitTransaction(stake.bytes) }],
    proposer: validators[1]!.address,
    time: 1_700_000_000_000,
    maxBytes: 4_000_000,
  });
  return { chain, execution };
}

function certificate(chain: Chain, hash: string, signerCount: number): QuorumCert {
  return {
    height: 1,
    round: 0,
    blockHash: hash,
    signatures: validators.slice(0, signerCount).map((key) => {
      const vote = signVote(chain.genesisHash, key, {
        kind: VoteKind.precommit,
        height: 1,
        round: 0,
        blockHash: hash,
      });
      return { address: vote.validator, signature: vote.signature };
    }),
  };
}

describe('certificate checks', () => {
  it('accepts precommits from more than 2/3 of the set and commits the block', () => {
    const { chain, execution } = setup();
    const qc = certificate(chain, execution.hash, 3);
    expect(chain.checkCertificate(qc, execution.hash)).toBeUndefined();
    chain.commit(execution, qc);
    expect(chain.height).toBe(1);
    expect(chain.validatorSet(2).has(joiner.address)).toBe(true);
    expect(chain.validatorSet(2).quorum).toBe(4);
  });

  it('rejects too few signers, outsiders, duplicates, forged signatures and another block', () => {
    const { chain, execution } = setup();
    const hash = execution.hash;
    expect(chain.checkCertificate(certificate(chain, hash, 2), hash)).toBe(
      '2 signatures, 3 needed of 4',
    );
    const outsider = signVote(chain.genesisHash, joiner, {
      kind: VoteKind.precommit,
      height: 1,
      round: 0,
      blockHash: hash,
    });
    const withOutsider = certificate(chain, hash, 2);
    withOutsider.signatures.push({ address: outsider.validator, signature: outsider.signature });
    expect(chain.checkCertificate(withOutsider, hash)).toMatch(/is not in the validator set$/);
    const duplicated = certificate(chain, hash, 3);
    duplicated.signatures.push(duplicated.signatures[0]!);
    expect(chain.checkCertificate(duplicated, hash)).toMatch(/appears twice$/);
    const forged = certificate(chain, hash, 3);
    forged.signatures[1] = { ...forged.signatures[1]!, signature: forged.signatures[0]!.signature };
    expect(chain.checkCertificate(forged, hash)).toMatch(/^bad signature from /);
    expect(chain.checkCertificate(certificate(chain, hash, 4), 'ab'.repeat(32))).toBe(
      'certificate is for another block',
    );
    const prevote = certificate(chain, hash, 3);
    prevote.signatures = prevote.signatures.map((s, i) => {
      const vote = signVote(chain.genesisHash, validators[i]!, {
        kind: VoteKind.prevote,
        height: 1,
        round: 0,
        blockHash: hash,
      });
      return { ...s, signature: vote.signature };
    });
    expect(chain.checkCertificate(prevote, hash)).toMatch(/^bad signature from /);
  });
});

describe('re-execution', () => {
  const resolve = (raw: string) => admitTransaction(Buffer.from(raw, 'hex'));

  it('reproduces an honest block', () => {
    const { chain, execution } = setup();
    const again = executeBlock(chain.executionBase(), execution.block, resolve);
    expect(typeof again === 'string' ? again : again.hash).toBe(execution.hash);
  });

  it('rejects a block whose state, results, validator sets or proposer do not add up', () => {
    const { chain, execution } = setup();
    const base = chain.executionBase();
    const tamper = (change: (b: Execution['block']) => void) => {
      const block = structuredClone(execution.block);
      change(block);
      return executeBlock(base, block, resolve);
    };
    expect(tamper((b) => (b.header.stateHash = '00'.repeat(32)))).toBe('stateHash mismatch');
    expect(tamper((b) => (b.results = [45]))).toBe('transaction 0 has result 0, block says 45');
    expect(tamper((b) => (b.header.nextValSetHash = b.header.valSetHash))).toBe(
      'nextValSetHash mismatch',
    );
    expect(tamper((b) => (b.header.proposer = joiner.address))).toBe(
      'proposer is not in the validator set',
    );
    expect(tamper((b) => b.txs.push(b.txs[0]!))).toBe('results do not match transactions');
    expect(tamper((b) => (b.header.prevBlockHash = '11'.repeat(32)))).toBe(
      'previous block hash mismatch',
    );
  });
});

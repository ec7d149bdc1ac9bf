// A node's data dir: committed blocks survive the process and replay onto the genesis (same
// hashes, same state), a crash mid-append loses only the torn record, corruption and foreign
// history are refused or set aside by name, and each commit appends one record.
import {
  appendFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  admitTransaction,
  generateKeys,
  signTransaction,
  stakeMessage,
  verifyEd25519Native,
  type AdmittedTransaction,
} from '../../src/pocket/index.ts';
import type { QuorumCert } from '../../src/localnet/block.ts';
import { BLOCK_LOG } from '../../src/localnet/block-store.ts';
import { Chain } from '../../src/localnet/chain.ts';
import { DataDirError, OTHER_CHAINS_DIR } from '../../src/localnet/data-dir.ts';
import { buildBlock, type ResolveTx } from '../../src/localnet/execute.ts';
import { buildGenesis, type Genesis } from '../../src/localnet/genesis.ts';
import { NodeStorage, type StorageLog } from '../../src/localnet/node-storage.ts';
import { signVote, VoteKind } from '../../src/localnet/votes.ts';

const keys = generateKeys({ count: 5, seed: 'node-storage' });
const validators = ['001', '002', '003', '004'].map((id) => keys.get(id)!);
const joiner = keys.get('005')!;
const genesis = buildGenesis({ keys, validators: 4, genesisTime: new Date(1_700_000_000_000) });

const resolve: ResolveTx = (raw) => admitTransaction(Buffer.from(raw, 'hex'));

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'node-storage-'));
  dirs.push(dir);
  return dir;
}

function recordingLog(): StorageLog & {
  lines: { level: string; details: object; message: string }[];
} {
  const lines: { level: string; details: object; message: string }[] = [];
  const at = (level: string) => (details: object, message: string) =>
    lines.push({ level, details, message });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

/** Precommits from just a quorum of the height's set (the first members in address order). */
function certificate(chain: Chain, height: number, hash: string): QuorumCert {
  const set = chain.validatorSet(height);
  const signers = [...validators, joiner]
    .filter((key) => set.has(key.address))
    .sort((a, b) => (a.address < b.address ? -1 : 1))
    .slice(0, set.quorum);
  return {
    height,
    round: 0,
    blockHash: hash,
    signatures: signers
      .map((key) => {
        const vote = signVote(chain.genesisHash, key, {
          kind: VoteKind.precommit,
          height,
          round: 0,
          blockHash: hash,
        });
        return { address: vote.validator, signature: vote.signature };
      })
      .sort((a, b) => (a.address < b.address ? -1 : 1)),
  };
}

function stakeOfJoiner(): { raw: string; tx: AdmittedTransaction } {
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
  return { raw: stake.hex, tx: admitTransaction(stake.bytes) };
}

/** Commits `count` blocks on `chain` (the first one stakes the joiner) and stores each. */
function commitBlocks(chain: Chain, storage: NodeStorage | undefined, count: number): void {
  for (let i = 0; i < count; i++) {
    const execution = buildBlock(chain.executionBase(), {
      candidates: chain.height === 0 ? [stakeOfJoiner()] : [],
      proposer: validators[chain.height % 4]!.address,
      time: 1_700_000_000_000 + chain.height * 1000,
      maxBytes: 4_000_000,
    });
    chain.commit(execution, certificate(chain, chain.height + 1, execution.hash));
    storage?.blockCommitted(chain.block(chain.height)!);
  }
}

function hashes(chain: Chain): string[] {
  return Array.from({ length: chain.height }, (_, i) => chain.block(i + 1)!.hash);
}

function reopen(
  dir: string,
  g: Genesis = genesis,
  log = recordingLog(),
): { chain: Chain; storage: NodeStorage } {
  const chain = new Chain(g, verifyEd25519Native);
  const storage = NodeStorage.open(dir, chain, log);
  storage.restore(chain, resolve);
  return { chain, storage };
}

describe('a node data dir', () => {
  it('replays the stored blocks onto the genesis: same hashes, same state, same certificates', () => {
    const dir = tempDir();
    const first = new Chain(genesis, verifyEd25519Native);
    const storage = NodeStorage.open(dir, first, recordingLog());
    expect(storage.restore(first, resolve).height).toBe(0);
    commitBlocks(first, storage, 12);
    storage.close();

    const { chain, storage: again } = reopen(dir);
    expect(chain.height).toBe(12);
    expect(hashes(chain)).toEqual(hashes(first));
    expect(chain.state.at().actor(4, joiner.address)).toBeDefined();
    expect(chain.block(5)?.qc.signatures).toEqual(first.block(5)?.qc.signatures);
    // And it goes on from there: the next block appends to the same log.
    commitBlocks(chain, again, 1);
    again.close();
    expect(reopen(dir).chain.height).toBe(13);
  });

  it('appends one record per commit instead of rewriting the chain', () => {
    const dir = tempDir();
    const chain = new Chain(genesis, verifyEd25519Native);
    const storage = NodeStorage.open(dir, chain, recordingLog());
    commitBlocks(chain, storage, 20);
    const before = statSync(join(dir, BLOCK_LOG)).size;
    commitBlocks(chain, storage, 1);
    const grown = statSync(join(dir, BLOCK_LOG)).size - before;
    // One empty block with a 3-signature certificate is well under 3 KB; the log is 20× that.
    expect(grown).toBeGreaterThan(0);
    expect(grown).toBeLessThan(3_000);
    expect(before).toBeGreaterThan(15 * grown);
    expect(readFileSync(join(dir, BLOCK_LOG), 'utf8').split('\n')).toHaveLength(22);
    storage.close();
  });

  it('keeps late certificate signatures', () => {
    const dir = tempDir();
    const chain = new Chain(genesis, verifyEd25519Native);
    const storage = NodeStorage.open(dir, chain, recordingLog());
    commitBlocks(chain, storage, 2);
    const committed = chain.block(2)!;
    const signed = new Set(committed.qc.signatures.map((x) => x.address));
    const missing = [...validators, joiner].find(
      (key) => chain.validatorSet(2).has(key.address) && !signed.has(key.address),
    )!;
    const late = signVote(chain.genesisHash, missing, {
      kind: VoteKind.precommit,
      height: 2,
      round: 0,
      blockHash: committed.hash,
    });
    expect(chain.addLateSignature(late)).toBe(true);
    storage.signatureAdded(2, late.validator, late.signature);
    storage.close();
    expect(reopen(dir).chain.block(2)?.qc.signatures).toHaveLength(committed.qc.signatures.length);
    expect(committed.qc.signatures).toHaveLength(5);
  });

  it('cuts off a record torn by a crash mid-append and keeps every whole one', () => {
    const dir = tempDir();
    const chain = new Chain(genesis, verifyEd25519Native);
    const storage = NodeStorage.open(dir, chain, recordingLog());
    commitBlocks(chain, storage, 5);
    storage.close();
    const log = join(dir, BLOCK_LOG);
    const lines = readFileSync(log, 'utf8').split('\n');
    appendFileSync(log, lines[1]!.slice(0, 100)); // half of a record, no newline

    const messages = recordingLog();
    const { chain: restored, storage: again } = reopen(dir, genesis, messages);
    expect(restored.height).toBe(5);
    expect(messages.lines.some((l) => l.level === 'warn' && /torn/.test(l.message))).toBe(true);
    commitBlocks(restored, again, 1);
    again.close();
    expect(reopen(dir).chain.height).toBe(6);
  });

  it('refuses a log with a damaged record in the middle (DATA_DIR_CORRUPT), naming the file', () => {
    const dir = tempDir();
    const chain = new Chain(genesis, verifyEd25519Native);
    const storage = NodeStorage.open(dir, chain, recordingLog());
    commitBlocks(chain, storage, 6);
    storage.close();
    const log = join(dir, BLOCK_LOG);
    const text = readFileSync(log, 'utf8');
    const at = text.indexOf('\n', text.indexOf('\n') + 1) + 40; // inside record 3
    writeFileSync(log, text.slice(0, at) + (text[at] === 'a' ? 'b' : 'a') + text.slice(at + 1));
    expect(() => reopen(dir)).toThrow(DataDirError);
    expect(() => reopen(dir)).toThrow(
      /DATA_DIR_CORRUPT: .*blocks\.log: unreadable record after height 2/,
    );
  });

  it('sets aside the folder of another genesis and starts this chain afresh', () => {
    const dir = tempDir();
    const other = buildGenesis({ keys, validators: 4, genesisTime: new Date(1_600_000_000_000) });
    const old = new Chain(other, verifyEd25519Native);
    const oldStorage = NodeStorage.open(dir, old, recordingLog());
    commitBlocks(old, oldStorage, 3);
    oldStorage.close();
    writeFileSync(join(dir, 'vote-guard.json'), '{"chain":"old"}');

    const log = recordingLog();
    const { chain } = reopen(dir, genesis, log);
    expect(chain.height).toBe(0);
    expect(log.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        details: expect.objectContaining({ code: 'DATA_DIR_OTHER_CHAIN' }),
      }),
    );
    const [aside] = readdirSync(join(dir, OTHER_CHAINS_DIR));
    expect(readdirSync(join(dir, OTHER_CHAINS_DIR, aside!)).sort()).toEqual([
      BLOCK_LOG,
      'chain.json',
      'vote-guard.json',
    ]);
    expect(readdirSync(dir).sort()).toEqual([BLOCK_LOG, 'chain.json', OTHER_CHAINS_DIR]);
    // The old chain's history is still whole where it was put.
    expect(
      readFileSync(join(dir, OTHER_CHAINS_DIR, aside!, BLOCK_LOG), 'utf8').split('\n'),
    ).toHaveLength(4);
  });

  it('refuses blocks that do not replay onto this genesis (a log copied without its chain file)', () => {
    const dir = tempDir();
    const other = buildGenesis({ keys, validators: 4, genesisTime: new Date(1_600_000_000_000) });
    const old = new Chain(other, verifyEd25519Native);
    const oldStorage = NodeStorage.open(dir, old, recordingLog());
    commitBlocks(old, oldStorage, 2);
    oldStorage.close();
    rmSync(join(dir, 'chain.json'));
    expect(() => reopen(dir)).toThrow(
      /DATA_DIR_CORRUPT: .*block 1 does not replay onto this genesis/,
    );
  });

  it('forgets the stored history on reset to genesis', () => {
    const dir = tempDir();
    const chain = new Chain(genesis, verifyEd25519Native);
    const storage = NodeStorage.open(dir, chain, recordingLog());
    commitBlocks(chain, storage, 3);
    storage.clear();
    storage.close();
    expect(reopen(dir).chain.height).toBe(0);
  });

  it('refuses a log where a block appears twice, and a data dir that is a file (DATA_DIR_UNUSABLE)', () => {
    const dir = tempDir();
    const chain = new Chain(genesis, verifyEd25519Native);
    const storage = NodeStorage.open(dir, chain, recordingLog());
    commitBlocks(chain, storage, 3);
    storage.blockCommitted(chain.block(3)!); // a second record of block 3
    storage.blockCommitted(chain.block(3)!);
    storage.close();
    expect(() => reopen(dir)).toThrow(/DATA_DIR_CORRUPT: .*block 3 follows block 3/);

    const file = join(tempDir(), 'not-a-folder');
    writeFileSync(file, 'x');
    expect(() => reopen(file)).toThrow(/DATA_DIR_UNUSABLE: .*not-a-folder/);
  });

  it('keeps the folders of the last three other chains it set aside', () => {
    const dir = tempDir();
    for (let i = 0; i < 5; i++) {
      const other = buildGenesis({
        keys,
        validators: 4,
        genesisTime: new Date(1_600_000_000_000 + i * 1000),
      });
      const old = new Chain(other, verifyEd25519Native);
      NodeStorage.open(dir, old, recordingLog()).close();
    }
    reopen(dir).storage.close();
    const kept = readdirSync(join(dir, OTHER_CHAINS_DIR)).sort();
    expect(kept).toHaveLength(3);
    // The newest three: the chains of genesis 3 and 4, and the last one before this genesis.
    const hashOf = (i: number): string =>
      new Chain(
        buildGenesis({ keys, validators: 4, genesisTime: new Date(1_600_000_000_000 + i * 1000) }),
        verifyEd25519Native,
      ).genesisHash.slice(0, 16);
    expect(kept.map((name) => name.slice(-16))).toEqual([hashOf(2), hashOf(3), hashOf(4)]);
  });
});

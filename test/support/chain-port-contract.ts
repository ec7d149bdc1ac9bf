// The chain port's contract (src/manager/chain/port.ts), as a suite any implementation must pass:
// Pocket V1 against a localnet node (test/manager/chain-port-pocket.test.ts) and the toy chain in
// memory (test/manager/chain-port-toy.unit.test.ts). What the manager's core relies on is what is asserted here — heights
// never go back, blocks link, rows are those of the height asked for, an action shows as its
// kind, a stake becomes a staked row once, the same bytes sent again are not a second action, the
// chain's identity and genesis set hold still, ids and keys read back — and `MEMBERS` names the
// test of every member of the port, so a member added to the port fails typecheck until one
// covers it.
import { describe, expect, it } from 'vitest';
import { isManagerError } from '../../src/manager/errors.ts';
import type { ChainAdapter } from '../../src/manager/chain/adapter.ts';
import type { ChainPort, ChainReads, CommittedTx } from '../../src/manager/chain/port.ts';
import {
  ActionKind,
  ActionState,
  ChainStatus,
  type ActionRecord,
  type ChainKey,
} from '../../src/manager/model.ts';
import { pending, waitFor } from '../../src/harness/wait.ts';

export interface ContractSubject {
  readonly port: ChainPort;
  /** A funded key that is not staked. */
  readonly newcomer: ChainKey;
  /** The text the keys source holds for `newcomer` (what `port.keys.parse` reads). */
  readonly newcomerKeyText: string;
  /** An address of the chain's format that no account holds. */
  readonly unfundedAddress: string;
  /** A service URL the chain accepts for it. */
  readonly serviceUrl: string;
  /** How many validators the genesis set staked. */
  readonly genesisCount: number;
  /** Makes (or waits for) the next block. */
  nextBlock(): Promise<void>;
  /** The URL of a node whose height `nodeHeight` can read. */
  readonly nodeUrl: string;
  /** The URL of a node that is not there (nothing listens). */
  readonly deadNodeUrl: string;
}

const signal = () => AbortSignal.timeout(30_000);

/** Each member of the port, and the test below that covers it. */
const TESTS = {
  heights: 'heights never go back, each block links to the one before it, and nodes are read',
  stake:
    'a stake shows as a stake of its signer, commits once, and its row is staked from its height on',
  unstake: 'an unstake makes the row leave the staked set',
  rules: 'rules: a stake needs more than an unstake, and a failed result is a named error',
  capabilities: 'capabilities and the stake are data',
  facts: "the chain's identity and genesis set hold still, and balances are read",
  ids: 'ids read back from their numbers and their text; keys parse, and a bad one is named',
  transport: 'the transport says what it can do, and does it',
} as const;

const MEMBERS = {
  port: {
    capabilities: TESTS.capabilities,
    reads: TESTS.heights,
    sender: TESTS.stake,
    rules: TESTS.rules,
    ids: TESTS.ids,
    keys: TESTS.ids,
    stake: TESTS.capabilities,
    nodeHeight: TESTS.heights,
    nodeReady: TESTS.heights,
    nodeAddress: TESTS.facts,
  },
  reads: {
    height: TESTS.heights,
    validators: TESTS.stake,
    block: TESTS.heights,
    mempool: TESTS.stake,
    mempoolEntry: TESTS.stake,
    transaction: TESTS.stake,
    balance: TESTS.facts,
    genesisValidators: TESTS.facts,
    identity: TESTS.facts,
  },
  sender: {
    transport: TESTS.transport,
    prepare: TESTS.stake,
    send: TESTS.stake,
    resend: TESTS.stake,
    triggerView: TESTS.heights,
    removeLeftovers: TESTS.transport,
  },
} as const satisfies {
  port: Record<keyof ChainPort, string>;
  reads: Record<keyof ChainReads, string>;
  sender: Record<keyof ChainAdapter, string>;
};

/** The block, from `from` on, that committed `kind` signed by `signer` (a CLI send has no hash). */
async function committedIn(
  port: ChainPort,
  signer: string,
  kind: ActionKind,
  from: number,
): Promise<CommittedTx | undefined> {
  const height = await port.reads.height();
  for (let h = Math.max(1, from); h <= height; h++) {
    const found = (await port.reads.block(h)).txs.find(
      (t) => t.signer === signer && t.kind === kind,
    );
    if (found !== undefined) return found;
  }
  return undefined;
}

function recordOf(port: ChainPort, address: string, prepared: ReturnType<ChainAdapter['prepare']>) {
  const record: ActionRecord = {
    seq: 1,
    validatorId: 'contract',
    address,
    kind: ActionKind.stake,
    state: ActionState.sent,
    mode: port.sender.transport.name,
    txHash: prepared.txHash,
    txHex: prepared.txHex,
    nonce: prepared.nonce,
    fingerprint: 'contract',
    reason: 'contract',
    preparedHeight: 0,
    sentHeight: 0,
    committedHeight: undefined,
    resultCode: undefined,
    errorCode: undefined,
    error: undefined,
    terminal: false,
    attempts: 1,
    createdAt: '',
    updatedAt: '',
  };
  return record;
}

/**
 * The checks, by test: each takes a subject and fails when the port breaks its contract. Exported
 * so that a test can show a check failing a port that breaks it (chain-port-toy.unit.test.ts).
 */
export const contractChecks: Record<
  keyof typeof TESTS,
  (s: ContractSubject, timeoutMs: number) => Promise<void>
> = {
  heights: async (s) => {
    const { port } = s;
    const first = await port.reads.height();
    expect(Number.isInteger(first)).toBe(true);
    await s.nextBlock();
    if ((await port.reads.height()) < 2) await s.nextBlock(); // block 1's parent is the genesis
    const second = await port.reads.height();
    expect(second).toBeGreaterThan(first);
    const [before, block] = await Promise.all([
      port.reads.block(second - 1),
      port.reads.block(second),
    ]);
    expect(block.height).toBe(second);
    expect(block.parentHash).toBe(before.hash);
    expect(block.hash).not.toBe(before.hash);
    expect(block.signers.length).toBeGreaterThan(0);
    const rows = await port.reads.validators(second);
    for (const signer of block.signers)
      expect(rows.find((r) => r.address === signer)?.status).toBe(ChainStatus.staked);
    expect(await port.nodeHeight(s.nodeUrl, signal())).toBeGreaterThanOrEqual(second);
    await expect(port.nodeReady(s.nodeUrl, signal())).resolves.toBeUndefined();
    await expect(port.nodeReady(s.deadNodeUrl, AbortSignal.timeout(10_000))).rejects.toThrow();
  },
  stake: async (s, timeoutMs) => {
    const { port, newcomer } = s;
    const request = {
      kind: ActionKind.stake,
      key: newcomer,
      stake: port.stake,
      serviceUrl: s.serviceUrl,
    };
    const start = await port.reads.height();
    const prepared = port.sender.prepare(request);
    expect(await port.sender.send(request, prepared, signal())).toBe('admitted');
    const listing = await port.reads.mempool();
    if (listing.readable) {
      expect(listing.txs.filter((t) => t.signer === newcomer.address)).toEqual([
        expect.objectContaining({ kind: ActionKind.stake }),
      ]);
    }
    if (prepared.txHash !== undefined) {
      const entry = await port.reads.mempoolEntry(prepared.txHash);
      expect(entry).toEqual({ inMempool: true, kind: ActionKind.stake });
    }
    const committed = await waitFor(
      async () => {
        await s.nextBlock();
        const found = await committedIn(port, newcomer.address, ActionKind.stake, start);
        return found ?? pending('the stake is in no block yet');
      },
      { timeoutMs: timeoutMs / 2, what: 'the stake to commit' },
    );
    expect(committed.resultCode).toBe(0);
    // Rows are those of the height asked for: staked from the stake's block on, not before.
    const rowAt = async (height: number) =>
      (await port.reads.validators(height)).find((r) => r.address === newcomer.address);
    expect((await rowAt(committed.height))?.status).toBe(ChainStatus.staked);
    expect((await rowAt(committed.height))?.stakedAmount).toBe(port.stake.amount);
    expect((await rowAt(committed.height - 1))?.status ?? 'absent').not.toBe(ChainStatus.staked);
    expect((await rowAt(await port.reads.height()))?.status).toBe(ChainStatus.staked);
    const block = await port.reads.block(committed.height);
    expect(
      block.txs.filter((t) => t.signer === newcomer.address && t.kind === ActionKind.stake),
    ).toHaveLength(1);
    if (prepared.txHash === undefined) {
      expect(port.sender.resend(recordOf(port, newcomer.address, prepared), signal())).toBe(
        undefined,
      );
      return;
    }
    expect(await port.reads.transaction(prepared.txHash)).toMatchObject({
      hash: prepared.txHash,
      height: committed.height,
      signer: newcomer.address,
      kind: ActionKind.stake,
      resultCode: 0,
    });
    expect(await port.reads.mempoolEntry(prepared.txHash)).toMatchObject({ inMempool: false });
    // The same bytes again are not a second stake.
    const again = port.sender.resend(recordOf(port, newcomer.address, prepared), signal());
    if (again !== undefined) expect(await again).toMatch(/^(in-mempool|committed)$/);
  },
  unstake: async (s, timeoutMs) => {
    const { port, newcomer } = s;
    const request = {
      kind: ActionKind.unstake,
      key: newcomer,
      stake: port.stake,
      serviceUrl: s.serviceUrl,
    };
    const prepared = port.sender.prepare(request);
    expect(await port.sender.send(request, prepared, signal())).toBe('admitted');
    await waitFor(
      async () => {
        await s.nextBlock();
        const height = await port.reads.height();
        const row = (await port.reads.validators(height)).find(
          (r) => r.address === newcomer.address,
        );
        return row === undefined || row.status !== ChainStatus.staked
          ? true
          : pending('still staked');
      },
      { timeoutMs: timeoutMs / 2, what: 'the unstake to commit' },
    );
    if (prepared.txHash !== undefined)
      expect(await port.reads.transaction(prepared.txHash)).toMatchObject({
        kind: ActionKind.unstake,
        resultCode: 0,
      });
  },
  rules: async (s) => {
    const { port } = s;
    expect(port.rules.requiredBalance(ActionKind.stake, port.stake)).toBeGreaterThan(
      port.rules.requiredBalance(ActionKind.unstake, port.stake),
    );
    expect(port.rules.requiredBalance(ActionKind.stake, port.stake)).toBeGreaterThanOrEqual(
      BigInt(port.stake.amount),
    );
    const failure = port.rules.committedFailure(ActionKind.stake, 1);
    expect(isManagerError(failure.error)).toBe(true);
    expect(failure.error.code).toMatch(/^[A-Z_]+$/);
    expect(typeof failure.terminal).toBe('boolean');
  },
  capabilities: async (s) => {
    const { capabilities, stake } = s.port;
    expect(typeof capabilities.profile).toBe('string');
    expect(typeof capabilities.lateJoinersVote).toBe('boolean');
    expect(typeof capabilities.unstakeLeavesQuorum).toBe('boolean');
    expect(typeof capabilities.leaderVoteCounts).toBe('boolean');
    expect(stake.amount).toMatch(/^[1-9]\d*$/);
    expect(stake.denomination).toMatch(/^[a-z][a-z0-9/]*$/i);
    // The chain writes the stake: its fingerprint text, and for people its amount and unit.
    expect(stake.inputs).toContain(stake.amount);
    expect(stake.shown).toContain(stake.amount);
    expect(stake.shown).toContain(stake.denomination);
    for (const value of Object.values(stake.fields))
      expect(typeof value === 'string' || value.every((v) => typeof v === 'string')).toBe(true);
  },
  facts: async (s) => {
    const { port } = s;
    const identity = await port.reads.identity();
    expect(identity).toEqual({ chainId: expect.any(String), genesisHash: expect.any(String) });
    expect(identity!.chainId).not.toBe('');
    expect(identity!.genesisHash).not.toBe('');
    await s.nextBlock();
    expect(await port.reads.identity()).toEqual(identity);
    const genesis = await port.reads.genesisValidators();
    expect(genesis.length).toBe(s.genesisCount);
    expect(new Set(genesis).size).toBe(genesis.length);
    // Optional: a chain whose nodes can say what they sign with; no node, no answer.
    if (port.nodeAddress !== undefined)
      await expect(port.nodeAddress(s.deadNodeUrl, AbortSignal.timeout(10_000))).rejects.toThrow();
    // The stake and the unstake above paid their way; what is left still pays an unstake.
    expect(await port.reads.balance(s.newcomer.address)).toBeGreaterThanOrEqual(
      port.rules.requiredBalance(ActionKind.unstake, port.stake),
    );
    expect(await port.reads.balance(s.unfundedAddress)).toBe(0n);
  },
  ids: async (s) => {
    const { ids, keys } = s.port;
    const { min, max } = ids.range;
    expect(ids.spec).toMatchObject({ min, max });
    for (const n of [min, Math.min(max, min + 3), max]) {
      const id = ids.fromNumber(n);
      expect(id).toBeDefined();
      expect(ids.isId(id!)).toBe(true);
      expect(ids.fromText(id!)).toBe(id);
      expect(ids.fromText(String(n))).toBe(id);
    }
    expect(ids.fromNumber(max + 1)).toBeUndefined();
    expect(ids.isId(ids.example)).toBe(true);
    expect(keys.parse(s.newcomerKeyText)).toMatchObject({
      address: s.newcomer.address,
      publicKeyHex: s.newcomer.publicKeyHex,
    });
    const garbage = `${s.newcomerKeyText.slice(0, -2)}!`;
    let thrown: unknown;
    try {
      keys.parse(garbage);
    } catch (error: unknown) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Error);
    expect(typeof (thrown as { code?: unknown }).code).toBe('string');
    expect((thrown as Error).message).not.toContain(garbage);
  },
  transport: async (s) => {
    const { port, newcomer, serviceUrl } = s;
    const { transport } = port.sender;
    expect(transport.name).toMatch(/^[a-z][a-z0-9-]*$/);
    expect(transport.viewTrigger).not.toBe('');
    for (const code of transport.maybeSentCodes) expect(code).toMatch(/^[A-Z][A-Z0-9_]*$/);
    expect(typeof transport.retryableMaySend).toBe('boolean');
    const prepared = port.sender.prepare({
      kind: ActionKind.unstake,
      key: newcomer,
      stake: port.stake,
      serviceUrl,
    });
    // Bytes known before the send, and sent again as they are, exactly when it says so.
    expect(prepared.txHex !== undefined && prepared.txHash !== undefined).toBe(
      transport.resendsSameBytes,
    );
    const record = { ...recordOf(port, newcomer.address, prepared), kind: ActionKind.unstake };
    const again = transport.resendsSameBytes
      ? undefined
      : port.sender.resend(record, AbortSignal.timeout(1_000));
    expect(again).toBeUndefined();
    if (port.sender.removeLeftovers !== undefined)
      expect(await port.sender.removeLeftovers()).toBeGreaterThanOrEqual(0);
  },
};

export function chainPortContract(
  name: string,
  subject: () => ContractSubject,
  timeoutMs = 60_000,
): void {
  describe(`the chain port's contract: ${name}`, () => {
    it('names a test for every member of the port', () => {
      const { port } = subject();
      const tests = new Set<string>(Object.values(TESTS));
      for (const group of Object.values(MEMBERS))
        for (const test of Object.values(group)) expect(tests.has(test)).toBe(true);
      // Every member the port has at run time is one the suite knows.
      for (const member of Object.keys(port)) expect(Object.keys(MEMBERS.port)).toContain(member);
      for (const member of Object.keys(port.reads))
        expect(Object.keys(MEMBERS.reads)).toContain(member);
      for (const member of Object.keys(port.sender))
        expect(Object.keys(MEMBERS.sender)).toContain(member);
    });

    for (const [key, test] of Object.entries(TESTS) as [keyof typeof TESTS, string][])
      it(test, () => contractChecks[key](subject(), timeoutMs), timeoutMs);
  });
}

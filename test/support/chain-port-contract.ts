// The chain port's contract (src/manager/chain/port.ts), as a suite any implementation must pass:
// Pocket V1 against a localnet node (test/manager/chain-port-pocket.test.ts) and the toy chain
// of the unit layer (test/manager/chain-port-toy.unit.test.ts). What the manager's core relies on
// is what is asserted here — heights never go back, blocks link, an action shows as its kind, a
// stake becomes a staked row once, the same bytes sent again are not a second action.
import { describe, expect, it } from 'vitest';
import { isManagerError } from '../../src/manager/errors.ts';
import type { ChainPort } from '../../src/manager/chain/port.ts';
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
  /** A service URL the chain accepts for it. */
  readonly serviceUrl: string;
  readonly stakeAmount: string;
  readonly stakeChains: readonly string[];
  /** Makes (or waits for) the next block. */
  nextBlock(): Promise<void>;
  /** The URL of a node whose height `nodeHeight` can read. */
  readonly nodeUrl: string;
}

const signal = () => AbortSignal.timeout(30_000);

export function chainPortContract(
  name: string,
  subject: () => ContractSubject,
  timeoutMs = 60_000,
): void {
  describe(`the chain port's contract: ${name}`, () => {
    it(
      'heights never go back, and each block links to the one before it',
      async () => {
        const s = subject();
        const { port } = s;
        const nextBlock = () => s.nextBlock();
        const first = await port.reads.height();
        expect(Number.isInteger(first)).toBe(true);
        await nextBlock();
        if ((await port.reads.height()) < 2) await nextBlock(); // block 1's parent is the genesis
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
        expect(await port.nodeHeight(subject().nodeUrl, signal())).toBeGreaterThanOrEqual(second);
      },
      timeoutMs,
    );

    it(
      'a stake shows as a stake of its signer, commits once, and its row is staked',
      async () => {
        const s = subject();
        const { port, newcomer } = s;
        const request = {
          kind: ActionKind.stake,
          key: newcomer,
          amount: s.stakeAmount,
          chains: s.stakeChains,
          serviceUrl: s.serviceUrl,
        };
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
          expect(entry.inMempool).toBe(true);
        }
        await waitFor(
          async () => {
            await s.nextBlock();
            const height = await port.reads.height();
            const row = (await port.reads.validators(height)).find(
              (r) => r.address === newcomer.address,
            );
            return row?.status === ChainStatus.staked
              ? row
              : pending(`row ${row?.status ?? 'absent'}`);
          },
          { timeoutMs: timeoutMs / 2, what: 'the stake to commit' },
        );
        if (prepared.txHash !== undefined) {
          const committed = await port.reads.transaction(prepared.txHash);
          expect(committed).toMatchObject({
            hash: prepared.txHash,
            signer: newcomer.address,
            kind: ActionKind.stake,
            resultCode: 0,
          });
          // The block that holds it says so too.
          const block = await port.reads.block(committed!.height);
          expect(block.txs.filter((t) => t.hash === prepared.txHash)).toHaveLength(1);
          // The same bytes again are not a second stake.
          const record: ActionRecord = {
            seq: 1,
            validatorId: 'contract',
            address: newcomer.address,
            kind: ActionKind.stake,
            state: ActionState.sent,
            mode: port.sender.mode,
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
          const again = port.sender.resend(record, signal());
          if (again !== undefined) expect(await again).toMatch(/^(in-mempool|committed)$/);
        }
      },
      timeoutMs,
    );

    it(
      'an unstake makes the row leave the staked set',
      async () => {
        const s = subject();
        const { port, newcomer } = s;
        const request = {
          kind: ActionKind.unstake,
          key: newcomer,
          amount: s.stakeAmount,
          chains: s.stakeChains,
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
      timeoutMs,
    );

    it('rules: a stake needs more than an unstake, and a failed result is a named error', () => {
      const { port } = subject();
      expect(port.rules.requiredBalance(ActionKind.stake, '1000')).toBeGreaterThan(
        port.rules.requiredBalance(ActionKind.unstake, '1000'),
      );
      const failure = port.rules.committedFailure(ActionKind.stake, 1);
      expect(isManagerError(failure.error)).toBe(true);
      expect(failure.error.code).toMatch(/^[A-Z_]+$/);
      expect(typeof failure.terminal).toBe('boolean');
    });

    it('capabilities are data', () => {
      const { capabilities } = subject().port;
      expect(typeof capabilities.profile).toBe('string');
      expect(typeof capabilities.lateJoinersVote).toBe('boolean');
      expect(typeof capabilities.unstakeLeavesQuorum).toBe('boolean');
      expect(typeof capabilities.leaderVoteCounts).toBe('boolean');
    });
  });
}

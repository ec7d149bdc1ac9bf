// Stage B at the state level: where fees and stakes go, unbonding, re-staking, EditStake.
import { describe, expect, it } from 'vitest';
import {
  admitTransaction,
  editStakeMessage,
  generateKeys,
  sendMessage,
  signTransaction,
  stakeMessage,
  unstakeMessage,
  type PocketMessage,
  type ValidatorKey,
} from '../../src/pocket/index.ts';
import { buildGenesis } from '../../src/localnet/genesis.ts';
import { PoolName } from '../../src/localnet/pools.ts';
import { applyTransaction, endBlock } from '../../src/localnet/stage-b.ts';
import { ChainState, WorkingState } from '../../src/localnet/state.ts';

const keys = generateKeys({ count: 4, seed: 'stage-b' });
const key = (id: string): ValidatorKey => keys.get(id)!;
const FEE = 10_000n;
const BALANCE = 100_000_000_000_000n;

function fresh(unstakingBlocks = 3): WorkingState {
  const genesis = buildGenesis({ keys, validators: 1, unstakingBlocks });
  return new WorkingState(ChainState.fromGenesis(genesis).at());
}

function apply(state: WorkingState, signer: ValidatorKey, message: PocketMessage, height = 1) {
  const tx = admitTransaction(signTransaction({ key: signer, message }).bytes);
  return applyTransaction(state, tx, height);
}

function stake(of: ValidatorKey, amount = '20000000000') {
  return stakeMessage({
    publicKey: of.publicKey,
    amount,
    chains: ['0001'],
    serviceUrl: 'host:1',
    outputAddress: of.addressBytes,
    signer: of.addressBytes,
  });
}

describe('stage B', () => {
  it('moves the stake to the validator pool and the fee to the fee collector', () => {
    const state = fresh();
    const poolBefore = state.pool(PoolName.validatorStake);
    expect(apply(state, key('002'), stake(key('002')))).toMatchObject({ included: true, code: 0 });
    expect(state.account(key('002').address)).toBe(BALANCE - 20_000_000_000n - FEE);
    expect(state.pool(PoolName.validatorStake)).toBe(poolBefore + 20_000_000_000n);
    expect(state.pool(PoolName.feeCollector)).toBe(FEE);
    expect(state.actor(4, key('002').address)).toMatchObject({
      stakedAmount: 20_000_000_000n,
      unstakingHeight: -1,
      chains: null,
      serviceUrl: 'host:1',
    });
  });

  it('keeps a failed message in the block with its code and only its fee charged', () => {
    const state = fresh();
    const outcome = apply(state, key('002'), stake(key('002'), '1'));
    expect(outcome).toMatchObject({ included: true, code: 45 });
    expect(state.account(key('002').address)).toBe(BALANCE - FEE);
    expect(state.actor(4, key('002').address)).toBeUndefined();
  });

  it('drops a transaction whose signer is not a candidate, changing nothing', () => {
    const state = fresh();
    const outcome = apply(state, key('003'), stake(key('002')));
    expect(outcome.included).toBe(false);
    expect(!outcome.included && outcome.error.code).toBe(3);
    expect(state.account(key('003').address)).toBe(BALANCE);
    expect(state.pool(PoolName.feeCollector)).toBe(0n);
  });

  it('drops a transaction whose signer cannot pay the fee', () => {
    const state = fresh();
    state.setAccount(key('002').address, FEE - 1n);
    const outcome = apply(state, key('002'), stake(key('002')));
    expect(!outcome.included && outcome.error.code).toBe(41);
    expect(state.account(key('002').address)).toBe(FEE - 1n);
  });

  it('unbonds at exactly the unstaking height and returns the stake to the output', () => {
    const state = fresh(3);
    apply(state, key('002'), stake(key('002')), 1);
    expect(
      apply(state, key('002'), unstakeMessage({ address: key('002').addressBytes }), 2),
    ).toMatchObject({ code: 0 });
    expect(state.actor(4, key('002').address)?.unstakingHeight).toBe(5);
    const balance = state.account(key('002').address);
    endBlock(state, 4);
    expect(state.account(key('002').address)).toBe(balance);
    endBlock(state, 5);
    expect(state.account(key('002').address)).toBe(balance + 20_000_000_000n);
    expect(
      apply(state, key('002'), unstakeMessage({ address: key('002').addressBytes }), 6),
    ).toMatchObject({
      code: 54,
      error: { detail: 'the staking status is not valid: 3 expected 2' },
    });
  });

  it('re-activates an unstaking validator, returning its held stake first', () => {
    const state = fresh(10);
    apply(state, key('002'), stake(key('002')), 1);
    apply(state, key('002'), unstakeMessage({ address: key('002').addressBytes }), 2);
    const pool = state.pool(PoolName.validatorStake);
    const balance = state.account(key('002').address);
    expect(apply(state, key('002'), stake(key('002'), '30000000000'), 3)).toMatchObject({
      code: 0,
    });
    expect(state.actor(4, key('002').address)).toMatchObject({
      unstakingHeight: -1,
      stakedAmount: 30_000_000_000n,
    });
    expect(state.pool(PoolName.validatorStake)).toBe(pool + 10_000_000_000n);
    expect(state.account(key('002').address)).toBe(balance - 10_000_000_000n - FEE);
    expect(apply(state, key('002'), stake(key('002')), 4)).toMatchObject({ code: 60 });
  });

  it('applies EditStake: 71 unknown, 128 lower, only the increase debited', () => {
    const state = fresh();
    const edit = (of: ValidatorKey, amount: string) =>
      editStakeMessage({ address: of.addressBytes, amount, chains: [], serviceUrl: 'host:2' });
    expect(apply(state, key('003'), edit(key('003'), '20000000000'))).toMatchObject({ code: 71 });
    apply(state, key('002'), stake(key('002')));
    expect(apply(state, key('002'), edit(key('002'), '1'))).toMatchObject({ code: 128 });
    const balance = state.account(key('002').address);
    expect(apply(state, key('002'), edit(key('002'), '25000000000'))).toMatchObject({ code: 0 });
    expect(state.account(key('002').address)).toBe(balance - 5_000_000_000n - FEE);
    expect(state.actor(4, key('002').address)).toMatchObject({
      stakedAmount: 25_000_000_000n,
      serviceUrl: 'host:2',
    });
  });

  it('transfers with MessageSend and reports 41 when the sender is short', () => {
    const state = fresh();
    const send = (amount: string) =>
      sendMessage({
        fromAddress: key('002').addressBytes,
        toAddress: key('003').addressBytes,
        amount,
      });
    expect(apply(state, key('002'), send('5'))).toMatchObject({ code: 0 });
    expect(state.account(key('003').address)).toBe(BALANCE + 5n);
    expect(apply(state, key('002'), send(String(BALANCE)))).toMatchObject({ code: 41 });
  });
});

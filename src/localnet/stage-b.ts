// Stage B: applying an admitted transaction at block time, as V1's utility module does.
// Signer and fee failures drop the transaction (no state change, never indexed); message
// failures keep it in the block with their V1 result code and the fee charged.
import {
  addressHexOf,
  bytesToHex,
  v1Errors,
  V1Error,
  type AdmittedTransaction,
  type PocketMessage,
} from '../pocket/index.ts';
import { actorTypeInfo, isActorKind, type ActorKind } from './actor-types.ts';
import { INTENDED_PROFILE, type FidelityProfile } from './fidelity.ts';
import { PoolName } from './pools.ts';
import { stakingStatus, StakingStatus, type WorkingState } from './state.ts';

/** What happened to one transaction in a block. */
export type TxOutcome =
  | { included: true; code: number; error: V1Error | undefined }
  | { included: false; error: V1Error };

const included = (error?: V1Error): TxOutcome => ({
  included: true,
  code: error?.code ?? 0,
  error,
});

/**
 * Applies `tx` to `state` as part of block `height`. Checks precede every write, so a failure
 * never leaves a partial change behind: a dropped transaction changes nothing, an included
 * failure only pays its fee.
 */
export function applyTransaction(
  state: WorkingState,
  tx: AdmittedTransaction,
  height: number,
  profile: FidelityProfile = INTENDED_PROFILE,
): TxOutcome {
  const signer = tx.signerAddress;
  const { message } = tx;
  const kind = messageActorKind(message);
  if (kind === null) return { included: false, error: v1Errors.unknownMessage(message.type) };
  const candidates = signerCandidates(state, message, kind);
  if (candidates instanceof V1Error) return { included: false, error: candidates };
  if (!candidates.includes(signer)) {
    return { included: false, error: v1Errors.invalidSigner(signer) };
  }
  const fee = BigInt(state.param(feeParam(message.type, kind)) ?? '0');
  const balance = state.account(signer);
  if (balance < fee) return { included: false, error: v1Errors.insufficientAmount(signer) };
  state.setAccount(signer, balance - fee);
  state.setPool(PoolName.feeCollector, state.pool(PoolName.feeCollector) + fee);
  return included(handleMessage({ state, message, kind: kind ?? 4, signer, height, profile }));
}

/**
 * End of block `height`: actors whose unstaking completes now get their stake back (V1's
 * `unbondUnstakingActors`, exact height match; the row stays), and actors paused for longer than
 * `*_max_pause_blocks` begin unstaking.
 */
export function endBlock(state: WorkingState, height: number): void {
  for (const kind of [1, 2, 3, 4] as const) {
    const info = actorTypeInfo(kind);
    for (const actor of state.actors(kind)) {
      if (actor.unstakingHeight === height) {
        state.setPool(info.pool, state.pool(info.pool) - actor.stakedAmount);
        state.setAccount(actor.output, state.account(actor.output) + actor.stakedAmount);
      } else if (actor.pausedHeight !== -1 && actor.unstakingHeight === -1) {
        const maxPause = numberParam(state, `${info.paramPrefix}_max_pause_blocks`);
        if (height - actor.pausedHeight >= maxPause) {
          state.setActor({ ...actor, unstakingHeight: height + unstakingBlocks(state, kind) });
        }
      }
    }
  }
}

/** The actor type a message acts on; `undefined` for sends; `null` when it names none valid. */
function messageActorKind(message: PocketMessage): ActorKind | undefined | null {
  if (message.type === 'MessageSend') return undefined;
  const value = message.message.actorType as number;
  return isActorKind(value) ? value : null;
}

/**
 * Who may sign: V1's `getSignerCandidates`. Stake: the output address or the staked key's own
 * address; unstake and unpause: the actor or its stored output (a missing actor drops the tx).
 * EditStake (no case in V1, so always dropped there) takes the unstake rule, except that a
 * missing actor is left for the handler to report as 71.
 */
function signerCandidates(
  state: WorkingState,
  message: PocketMessage,
  kind: ActorKind | undefined,
): string[] | V1Error {
  switch (message.type) {
    case 'MessageSend':
      return [bytesToHex(message.message.fromAddress)];
    case 'MessageStake': {
      const { publicKey } = message.message;
      if (publicKey.length !== 32) {
        return v1Errors.newPublicKeyFromBytes(
          `the public key length is not valid: expected 32, got ${publicKey.length}`,
        );
      }
      return [bytesToHex(message.message.outputAddress), addressHexOf(publicKey)];
    }
    case 'MessageEditStake': {
      const address = bytesToHex(message.message.address);
      const actor = state.actor(kind ?? 4, address);
      return actor === undefined ? [address] : [address, actor.output];
    }
    case 'MessageUnstake':
    case 'MessageUnpause': {
      const address = bytesToHex(message.message.address);
      const actor = state.actor(kind ?? 4, address);
      return actor === undefined ? v1Errors.notExists() : [address, actor.output];
    }
  }
}

interface HandleContext {
  state: WorkingState;
  message: PocketMessage;
  kind: ActorKind;
  signer: string;
  height: number;
  profile: FidelityProfile;
}

function handleMessage(context: HandleContext): V1Error | undefined {
  const { message } = context;
  switch (message.type) {
    case 'MessageSend':
      return handleSend(context.state, {
        from: bytesToHex(message.message.fromAddress),
        to: bytesToHex(message.message.toAddress),
        amount: message.message.amount,
      });
    case 'MessageStake':
      return handleStake(context, message.message);
    case 'MessageEditStake':
      return handleEditStake(context, message.message);
    case 'MessageUnstake':
      return handleUnstake(context, bytesToHex(message.message.address));
    case 'MessageUnpause':
      return handleUnpause(context, bytesToHex(message.message.address));
  }
}

function handleSend(
  state: WorkingState,
  send: { from: string; to: string; amount: string },
): V1Error | undefined {
  const amount = parseAmount(send.amount);
  if (amount instanceof V1Error) return amount;
  if (amount < 0n) return v1Errors.stringToBigInt(`negative amount ${send.amount}`);
  const balance = state.account(send.from);
  if (balance < amount) return v1Errors.insufficientAmount(send.from);
  state.setAccount(send.from, balance - amount);
  state.setAccount(send.to, state.account(send.to) + amount);
  return undefined;
}

/**
 * V1's checks in V1's order (45 minimum stake, 41 funds, 60 exists) with one intended change:
 * an unstaking or unstaked actor may stake again. Its stake still held in the pool goes back to
 * its output first, then it is staked anew (new key data, amount, output; unstaking −1). The v1
 * profile keeps V1's rule: any existing row is 60 (tx_message_handler.go:92-96).
 */
function handleStake(
  context: HandleContext,
  msg: Extract<PocketMessage, { type: 'MessageStake' }>['message'],
): V1Error | undefined {
  const { state, kind, signer, height } = context;
  const info = actorTypeInfo(kind);
  const amount = parseAmount(msg.amount);
  if (amount instanceof V1Error) return amount;
  const minimum = BigInt(state.param(`${info.paramPrefix}_minimum_stake`) ?? '0');
  if (amount < minimum) return v1Errors.minimumStake();
  const address = addressHexOf(msg.publicKey);
  const existing = state.actor(kind, address);
  if (context.profile.restakeKnown === 'reject') {
    if (state.account(signer) < amount) return v1Errors.insufficientAmount(signer);
    if (existing !== undefined) return v1Errors.alreadyExists();
  }
  const held =
    existing !== undefined && existing.unstakingHeight !== -1 && existing.unstakingHeight >= height
      ? existing.stakedAmount
      : 0n;
  const refundToSigner = existing?.output === signer ? held : 0n;
  if (state.account(signer) + refundToSigner < amount) {
    return v1Errors.insufficientAmount(signer);
  }
  if (stakingStatus(existing, height) === StakingStatus.staked) return v1Errors.alreadyExists();
  if (existing !== undefined && held > 0n) {
    state.setPool(info.pool, state.pool(info.pool) - held);
    state.setAccount(existing.output, state.account(existing.output) + held);
  }
  state.setAccount(signer, state.account(signer) - amount);
  state.setPool(info.pool, state.pool(info.pool) + amount);
  state.setActor({
    address,
    actorType: kind,
    publicKey: bytesToHex(msg.publicKey),
    chains: kind === 4 ? null : [...msg.chains],
    serviceUrl: msg.serviceUrl,
    stakedAmount: amount,
    pausedHeight: -1,
    unstakingHeight: -1,
    output: bytesToHex(msg.outputAddress),
  });
  return undefined;
}

/**
 * EditStake as V1's handler means it (71 missing, 128 lower amount, 41 funds; only the increase
 * is debited), reachable here. Only a staked actor can be edited (else 54): an unstaking
 * actor's stake is on its way back.
 */
function handleEditStake(
  context: HandleContext,
  msg: Extract<PocketMessage, { type: 'MessageEditStake' }>['message'],
): V1Error | undefined {
  const { state, kind, signer, height } = context;
  const info = actorTypeInfo(kind);
  const existing = state.actor(kind, bytesToHex(msg.address));
  if (existing === undefined) return v1Errors.notExists();
  const amount = parseAmount(msg.amount);
  if (amount instanceof V1Error) return amount;
  if (amount < existing.stakedAmount) return v1Errors.stakeLess();
  const increase = amount - existing.stakedAmount;
  if (state.account(signer) < increase) return v1Errors.insufficientAmount(signer);
  const status = stakingStatus(existing, height);
  if (status !== StakingStatus.staked) return v1Errors.invalidStatus(status, StakingStatus.staked);
  state.setAccount(signer, state.account(signer) - increase);
  state.setPool(info.pool, state.pool(info.pool) + increase);
  state.setActor({
    ...existing,
    stakedAmount: amount,
    serviceUrl: msg.serviceUrl,
    chains: kind === 4 ? null : [...msg.chains],
  });
  return undefined;
}

/** V1: only a staked actor can unstake (54); it leaves at `height + *_unstaking_blocks`. */
function handleUnstake(context: HandleContext, address: string): V1Error | undefined {
  const { state, kind, height } = context;
  const actor = state.actor(kind, address);
  const status = stakingStatus(actor, height);
  if (actor === undefined || status !== StakingStatus.staked) {
    return v1Errors.invalidStatus(status, StakingStatus.staked);
  }
  state.setActor({ ...actor, unstakingHeight: height + unstakingBlocks(state, kind) });
  return undefined;
}

/** V1: 67 when not paused, 68 before `*_minimum_pause_blocks` have passed. */
function handleUnpause(context: HandleContext, address: string): V1Error | undefined {
  const { state, kind, height } = context;
  const actor = state.actor(kind, address);
  if (actor === undefined || actor.pausedHeight === -1) return v1Errors.notPaused();
  const minimum = numberParam(state, `${actorTypeInfo(kind).paramPrefix}_minimum_pause_blocks`);
  if (height < actor.pausedHeight + minimum) return v1Errors.notReadyToUnpause();
  state.setActor({ ...actor, pausedHeight: -1 });
  return undefined;
}

/** Go's `big.Int.SetString(s, 10)`: optional sign, decimal digits; anything else is 40. */
function parseAmount(text: string): bigint | V1Error {
  if (!/^[+-]?\d+$/.test(text)) {
    return v1Errors.stringToBigInt(`cannot convert ${JSON.stringify(text)} to an integer`);
  }
  return BigInt(text);
}

function unstakingBlocks(state: WorkingState, kind: ActorKind): number {
  return numberParam(state, `${actorTypeInfo(kind).paramPrefix}_unstaking_blocks`);
}

function numberParam(state: WorkingState, name: string): number {
  return Number(state.param(name) ?? '0');
}

/** The fee parameter of a message (`message_stake_validator_fee`, `message_send_fee`). */
export function feeParam(type: PocketMessage['type'], kind: ActorKind | undefined): string {
  const actor = actorTypeInfo(kind ?? 4).feeName;
  switch (type) {
    case 'MessageSend':
      return 'message_send_fee';
    case 'MessageStake':
      return `message_stake_${actor}_fee`;
    case 'MessageEditStake':
      return `message_edit_stake_${actor}_fee`;
    case 'MessageUnstake':
      return `message_unstake_${actor}_fee`;
    case 'MessageUnpause':
      return `message_unpause_${actor}_fee`;
  }
}

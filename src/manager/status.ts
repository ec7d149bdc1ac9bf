// The status view served by GET /v1/validators and shown by `cluster-manager status`: per
// validator its pod, wanted-ness, on-chain row, phase, reason and last action.
import type { ActionRecord, ChainStatus, ValidatorId } from './model.ts';
import type { Phase, Wait } from './planner/plan.ts';
import type { ReadModel } from './read-model.ts';

export interface ValidatorStatus {
  /** Validator id, or the address for an unmanaged validator. */
  key: string;
  id: ValidatorId | null;
  /** The address the phase is about: its key's, or a key rotation's old one until it is out. */
  address: string | null;
  pod: string | null;
  ready: boolean;
  wanted: boolean;
  chain: {
    status: ChainStatus;
    stakedAmount: string | null;
    unstakingHeight: number | null;
    lastSignedHeight: number | null;
  };
  phase: Phase;
  reason: string;
  waitingFor: Wait | null;
  pendingAction: 'stake' | 'unstake' | null;
  lastAction: ActionSummary | null;
}

export interface ActionSummary {
  seq: number;
  validatorId: string;
  kind: 'stake' | 'unstake';
  state: string;
  /** The transport's name, as the chain labels it (e.g. `rpc`). */
  mode: string;
  txHash: string | null;
  preparedHeight: number;
  sentHeight: number | null;
  committedHeight: number | null;
  resultCode: number | null;
  errorCode: string | null;
  error: string | null;
  reason: string;
  attempts: number;
  createdAt: string;
  updatedAt: string;
}

export function summarizeAction(record: ActionRecord): ActionSummary {
  return {
    seq: record.seq,
    validatorId: record.validatorId,
    kind: record.kind,
    state: record.state,
    mode: record.mode,
    txHash: record.txHash ?? null,
    preparedHeight: record.preparedHeight,
    sentHeight: record.sentHeight ?? null,
    committedHeight: record.committedHeight ?? null,
    resultCode: record.resultCode ?? null,
    errorCode: record.errorCode ?? null,
    error: record.error ?? null,
    reason: record.reason,
    attempts: record.attempts,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

/** Every validator the manager knows, in id order (unmanaged addresses last). */
export function validatorStatuses(
  read: Pick<ReadModel, 'desired' | 'plan' | 'chain' | 'actions'>,
): ValidatorStatus[] {
  const desired = read.desired().validators;
  return read
    .plan()
    .map((decision): ValidatorStatus => {
      const entry = decision.id === undefined ? undefined : desired.get(decision.id);
      // The address the phase and reason are about: a key rotation's old address while it is
      // unstaked (its node still signs with it), not the new key's, which is not staked yet.
      const address = decision.subject ?? decision.address;
      const row = address === undefined ? undefined : read.chain.validators.get(address);
      const latest = decision.id === undefined ? undefined : read.actions.latest.get(decision.id);
      const signed = address === undefined ? undefined : read.chain.signers.get(address);
      return {
        key: decision.key,
        id: decision.id ?? null,
        address: address ?? null,
        pod: entry?.pod?.name ?? null,
        ready: entry?.pod?.ready === true,
        wanted: decision.wanted,
        chain: {
          status:
            decision.subject === undefined
              ? decision.chainStatus
              : (row?.status ?? decision.chainStatus),
          stakedAmount: row?.stakedAmount ?? null,
          unstakingHeight:
            row === undefined || row.unstakingHeight < 0 ? null : row.unstakingHeight,
          lastSignedHeight: signed ?? null,
        },
        phase: decision.phase,
        reason: decision.reason,
        waitingFor: decision.waitingFor ?? null,
        pendingAction: decision.action === 'none' ? null : decision.action,
        lastAction: latest === undefined ? null : summarizeAction(latest),
      };
    })
    .sort((a, b) =>
      (a.id === null) === (b.id === null) ? a.key.localeCompare(b.key) : a.id === null ? 1 : -1,
    );
}

// Builders for planner inputs: validators with keys, pods, chain rows and actions, in a few lines.
import { generateKeys, type ValidatorKey } from '../../src/pocket/index.ts';
import { KeyStore } from '../../src/manager/keys/key-store.ts';
import {
  ChainStatus,
  type ActionKind,
  type ActionRecord,
  type ChainValidator,
  type DesiredValidator,
  type KeyObservation,
  type PodView,
  type ValidatorId,
} from '../../src/manager/model.ts';
import type { MinimumSet } from '../../src/manager/planner/minimum-set.ts';
import type {
  ChainTrust,
  PlanInput,
  PlanSettings,
  StaleRestart,
} from '../../src/manager/planner/plan.ts';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';
import { pocketKeys } from '../../src/manager/chain/pocket/pocket-key.ts';
import { pocketStake } from '../../src/manager/chain/pocket/pocket-stake.ts';
import { keySetOfSecret } from '../../src/manager/discovery/secret-keys.ts';

export const NOW = Date.parse('2026-11-29T12:00:00Z');
export const KEYS = generateKeys({ count: 20, seed: 'planner' });

export function keyOf(id: ValidatorId): ValidatorKey {
  const key = KEYS.get(id);
  if (key === undefined) throw new Error(`no test key ${id}`);
  return key;
}

export function keyStore(
  ids: readonly ValidatorId[],
  extra: Record<string, string> = {},
): KeyStore {
  const store = new KeyStore(pocketIds, pocketKeys);
  const data: Record<string, string> = { ...extra };
  for (const id of ids) data[id] = Buffer.from(keyOf(id).exportPrivateKeyHex()).toString('base64');
  store.update(keySetOfSecret({ metadata: { resourceVersion: '1' }, data }));
  return store;
}

export function pod(id: ValidatorId, fields: Partial<PodView> = {}): PodView {
  return {
    name: `validator-${Number(id) - 1}`,
    namespace: 'default',
    uid: `uid-${id}`,
    ready: true,
    readySince: NOW - 60_000,
    terminating: false,
    held: false,
    draining: false,
    nodeRpcUrl: `http://127.0.0.1:${50_000 + Number(id)}`,
    serviceUrl: `v${id}:42069`,
    ...fields,
  };
}

export function wanted(id: ValidatorId, podFields: Partial<PodView> | null = {}): DesiredValidator {
  return {
    id,
    wanted: true,
    wantedReason: `ordinal ${Number(id) - 1} below replicas`,
    statefulSet: {
      name: 'validator',
      namespace: 'default',
      uid: 'sts',
      replicas: 10,
      serviceName: 'validators',
      scaleTarget: undefined,
    },
    ordinal: Number(id) - 1,
    pod: podFields === null ? undefined : pod(id, podFields),
    conflict: undefined,
  };
}

export function unwanted(
  id: ValidatorId,
  podFields: Partial<PodView> | null = {},
): DesiredValidator {
  return { ...wanted(id, podFields), wanted: false, wantedReason: 'ordinal not below replicas' };
}

export function row(id: ValidatorId, status: ChainStatus = ChainStatus.staked): ChainValidator {
  return {
    address: keyOf(id).address,
    status,
    stakedAmount: '1',
    unstakingHeight: status === ChainStatus.staked ? -1 : 5,
    serviceUrl: '',
  };
}

export function action(id: ValidatorId, fields: Partial<ActionRecord> = {}): ActionRecord {
  return {
    seq: 1,
    validatorId: id,
    address: keyOf(id).address,
    kind: 'stake',
    state: 'sent',
    mode: 'rpc',
    txHash: 'ab'.repeat(32),
    txHex: '00',
    nonce: '1',
    fingerprint: 'f',
    reason: 'r',
    preparedHeight: 10,
    sentHeight: 10,
    committedHeight: undefined,
    resultCode: undefined,
    errorCode: undefined,
    error: undefined,
    terminal: false,
    attempts: 1,
    createdAt: '',
    updatedAt: '',
    ...fields,
  };
}

export const SETTINGS: PlanSettings = {
  readyDebounceMs: 2_000,
  syncTolerance: 1,
  syncCheck: true,
  pacing: 'bft',
  stake: pocketStake('150000000001', ['0001']),
  nodeHeightMaxAgeMs: 5_000,
  votingWindow: 20,
};

export interface Scenario {
  desired?: DesiredValidator[];
  unresolvedWanted?: string[];
  keys?: ValidatorId[];
  extraSecretData?: Record<string, string>;
  chain?: ChainValidator[];
  /** Ids that have signed a certificate at height 100. */
  signers?: ValidatorId[];
  open?: ActionRecord[];
  latest?: ActionRecord[];
  stakeHeights?: Record<ValidatorId, number>;
  nodeHeights?: Record<ValidatorId, number>;
  mempool?: { id: ValidatorId; kind: ActionKind }[];
  paused?: boolean;
  synced?: boolean;
  height?: number;
  settings?: Partial<PlanSettings>;
  /** Default: trusted. */
  trust?: ChainTrust;
  /** Default: size 0 (no minimum), so that rows of the rule table are seen alone. */
  minimumSet?: MinimumSet | undefined;
  /** When each id's current key was first seen (its address is the key's in the Secret). */
  keysSeen?: Record<ValidatorId, number>;
  /** Pods the manager deleted for a stale key, by id. */
  staleRestarts?: Record<ValidatorId, StaleRestart>;
}

export function input(s: Scenario): PlanInput {
  const desired = s.desired ?? [];
  const keyIds =
    s.keys ??
    [
      ...new Set([
        ...desired.map((d) => d.id),
        ...(s.chain ?? []).map((r) => idOfAddress(r.address)),
      ]),
    ].filter((id): id is string => id !== undefined);
  const keys = keyStore(keyIds, s.extraSecretData);
  return {
    now: NOW,
    synced: s.synced ?? true,
    paused: s.paused ?? false,
    height: s.height ?? 100,
    trust: s.trust ?? { trusted: true, reason: undefined },
    minimumSet: 'minimumSet' in s ? s.minimumSet : { size: 0, source: 'test' },
    desired: {
      validators: new Map(desired.map((d) => [d.id, d])),
      unresolvedWanted: s.unresolvedWanted ?? [],
      problems: [],
    },
    keys,
    chain: new Map((s.chain ?? []).map((r) => [r.address, r])),
    signers: new Map((s.signers ?? []).map((id) => [keyOf(id).address, 100])),
    mempool: new Map(
      (s.mempool ?? []).map((m) => [keyOf(m.id).address, { hash: 'cd'.repeat(32), kind: m.kind }]),
    ),
    open: new Map((s.open ?? []).map((a) => [a.validatorId, a])),
    latest: new Map((s.latest ?? s.open ?? []).map((a) => [a.validatorId, a])),
    stakeHeights: new Map(Object.entries(s.stakeHeights ?? {})),
    nodeHeights: new Map(
      Object.entries(
        s.nodeHeights ?? Object.fromEntries(desired.map((d) => [d.id, s.height ?? 100])),
      ).map(([id, height]) => [id, { height, at: NOW - 100 }]),
    ),
    settings: { ...SETTINGS, ...s.settings },
    ...(s.keysSeen === undefined ? {} : { keysSeen: keysSeenOf(s.keysSeen, keys) }),
    ...(s.staleRestarts === undefined
      ? {}
      : { staleRestarts: new Map(Object.entries(s.staleRestarts)) }),
  };
}

/** When each id's current key was seen (id → epoch ms), named by its address in `keys`. */
export function keysSeenOf(
  seen: Record<ValidatorId, number>,
  keys: { addressOf(id: ValidatorId): string | undefined },
): Map<ValidatorId, KeyObservation> {
  return new Map(
    Object.entries(seen).map(([id, observedAt]) => [
      id,
      { address: keys.addressOf(id) ?? '', observedAt },
    ]),
  );
}

function idOfAddress(address: string): ValidatorId | undefined {
  for (const [id, key] of KEYS) if (key.address === address) return id;
  return undefined;
}

export const GENESIS = ['001', '002', '003', '004'];

// The participation read (GET /v1/participation, the `block` events, the CLI grid, the page):
// the record's heights in the words of the control RPC — validator ids for the addresses the
// manager has keys for (the address otherwise), `absent` as the validators staked at a height
// whose signature its certificate lacks, times as ISO 8601 — and the window rules: the last 50
// heights by default, at most 1,000 per call.
import { ManagerError } from '../errors.ts';
import type { ChainValidator, DesiredState } from '../model.ts';
import type { KeyLookup } from '../planner/plan.ts';
import { hasBit } from './address-bits.ts';
import type { ParticipationRecord, RecordedHeight } from './record.ts';

/** Heights answered when no window is asked for. */
export const DEFAULT_HEIGHTS = 50;
/** The most heights one read answers. */
export const MAX_HEIGHTS = 1_000;
/**
 * `block` events sent for one read of the chain: a manager that catches up many heights at once
 * (after the chain was unreachable) sends the newest ones only, so that a follower is not dropped
 * as a slow client for a burst; a follower that sees a gap reads the window again.
 */
export const BLOCK_EVENTS_PER_READ = 10;

export interface ParticipationTx {
  kind: 'stake' | 'unstake';
  validator: string;
  hash: string;
  /** 0 when the chain applied it. */
  resultCode: number;
}

export interface ParticipationHeight {
  height: number;
  hash: string;
  time: string | null;
  proposer: string | null;
  signers: string[];
  /** Staked at this height and not in its certificate; null when the staked set is not known. */
  absent: string[] | null;
  transactions: ParticipationTx[];
}

export interface ParticipationDetail {
  address: string | null;
  serviceUrl: string | null;
}

export interface Participation {
  validators: string[];
  details: Record<string, ParticipationDetail>;
  from: number;
  to: number;
  height: number;
  recorded: { from: number; to: number } | null;
  heights: ParticipationHeight[];
}

/** What the read needs of the manager: the record, the names of addresses, the wanted ids. */
export interface ParticipationInputs {
  record: ParticipationRecord;
  keys: Pick<KeyLookup, 'idOfAddress' | 'addressOf'>;
  desired: () => DesiredState;
  chain: { readonly height: number; readonly validators: ReadonlyMap<string, ChainValidator> };
}

/** The participation read and its block feed, as the control RPC serves them. */
export interface ParticipationSource {
  /** The heights of the window (defaults above); BAD_REQUEST for a window it refuses. */
  readonly read: (window: { from?: number | undefined; to?: number | undefined }) => Participation;
  /** Calls `listener` with each new height (see BLOCK_EVENTS_PER_READ); returns the unsubscribe. */
  readonly onBlock: (listener: (height: ParticipationHeight) => void) => () => void;
}

/** The window a read answers: the last 50 heights, 50 from `from`, or 50 up to `to`. */
export function windowOf(
  asked: { from?: number | undefined; to?: number | undefined },
  newest: number,
): { from: number; to: number } {
  const { from, to } = asked;
  const window =
    from !== undefined && to !== undefined
      ? { from, to }
      : from !== undefined
        ? { from, to: from + DEFAULT_HEIGHTS - 1 }
        : to !== undefined
          ? { from: Math.max(1, to - DEFAULT_HEIGHTS + 1), to }
          : { from: Math.max(1, newest - DEFAULT_HEIGHTS + 1), to: Math.max(1, newest) };
  if (window.from < 1 || window.to < 1)
    throw new ManagerError('BAD_REQUEST', 'heights start at 1: `from` and `to` must be 1 or more');
  if (window.from > window.to)
    throw new ManagerError(
      'BAD_REQUEST',
      `\`from\` (${window.from}) is above \`to\` (${window.to}): ask for from ≤ to`,
    );
  const size = window.to - window.from + 1;
  if (size > MAX_HEIGHTS)
    throw new ManagerError(
      'BAD_REQUEST',
      `at most ${MAX_HEIGHTS} heights per call (asked for ${size}): page with from and to`,
      { details: { limit: MAX_HEIGHTS, asked: size } },
    );
  return window;
}

export function participationSource(inputs: ParticipationInputs): ParticipationSource {
  const { record, keys } = inputs;
  /** Names that are bare addresses (no key of the manager has them), listed after the ids. */
  const bare = new Set<string>();
  const name = (address: string): string => {
    const id = keys.idOfAddress(address);
    if (id !== undefined) return id;
    bare.add(address);
    return address;
  };
  const byName = (a: string, b: string): number =>
    Number(bare.has(a)) - Number(bare.has(b)) || (a < b ? -1 : a > b ? 1 : 0);
  const heightOf = (h: RecordedHeight): ParticipationHeight => {
    const signers = new Set(h.signers);
    return {
      height: h.height,
      hash: h.hash,
      time: h.time === undefined ? null : new Date(h.time).toISOString(),
      proposer: h.proposer === undefined ? null : name(h.proposer),
      signers: h.signers.map(name).sort(byName),
      absent:
        h.staked
          ?.filter((a) => !signers.has(a))
          .map(name)
          .sort(byName) ?? null,
      transactions: h.txs.map((tx) => ({
        kind: tx.kind,
        validator: name(tx.signer),
        hash: tx.hash,
        resultCode: tx.resultCode,
      })),
    };
  };
  const listeners = new Set<(height: ParticipationHeight) => void>();
  let unsubscribe: (() => void) | undefined;
  return {
    read: (asked) => {
      const newest = Math.max(inputs.chain.height, record.range?.to ?? 0);
      const window = windowOf(asked, newest);
      const { addresses, heights } = record.compact(window.from, window.to);
      // Each address named once, and the numbers in the order of their names: a height's lists
      // are then a walk over that order (no sort per height).
      const names = addresses.map(name);
      const order = names.map((_, n) => n).sort((a, b) => byName(names[a] ?? '', names[b] ?? ''));
      const seen = new Uint8Array(Math.ceil(addresses.length / 8));
      const named = new Set<string>();
      const answer = heights.map((h): ParticipationHeight => {
        const signers: string[] = [];
        const absent: string[] | null = h.staked === undefined ? null : [];
        for (const n of order) {
          const signed = hasBit(h.signers, n);
          if (signed) signers.push(names[n] ?? '');
          else if (absent !== null && h.staked !== undefined && hasBit(h.staked, n))
            absent.push(names[n] ?? '');
          if (signed || (h.staked !== undefined && hasBit(h.staked, n)))
            seen[n >> 3] = (seen[n >> 3] ?? 0) | (1 << (n & 7));
        }
        const proposer = h.proposer === undefined ? null : (names[h.proposer] ?? null);
        if (proposer !== null) named.add(proposer);
        for (const tx of h.txs) named.add(name(tx.signer));
        return {
          height: h.height,
          hash: h.hash,
          time: h.time === undefined ? null : new Date(h.time).toISOString(),
          proposer,
          signers,
          absent,
          transactions: h.txs.map((tx) => ({
            kind: tx.kind,
            validator: name(tx.signer),
            hash: tx.hash,
            resultCode: tx.resultCode,
          })),
        };
      });
      for (const n of order) if (hasBit(seen, n)) named.add(names[n] ?? '');
      for (const [id, entry] of inputs.desired().validators) if (entry.wanted) named.add(id);
      const validators = [...named].sort(byName);
      return {
        validators,
        details: Object.fromEntries(validators.map((v) => [v, detailOf(v, inputs)])),
        ...window,
        height: newest,
        recorded: record.range ?? null,
        heights: answer,
      };
    },
    onBlock: (listener) => {
      listeners.add(listener);
      unsubscribe ??= record.onSettled((fresh) => {
        for (const h of fresh.slice(-BLOCK_EVENTS_PER_READ)) {
          const event = heightOf(h);
          for (const l of listeners) l(event);
        }
      });
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) {
          unsubscribe?.();
          unsubscribe = undefined;
        }
      };
    },
  };
}

/** A validator's address (from its key, or the name itself) and its chain row's service URL. */
function detailOf(validator: string, inputs: ParticipationInputs): ParticipationDetail {
  const address =
    inputs.keys.addressOf(validator) ?? (inputs.chain.validators.has(validator) ? validator : null);
  const row = address === null ? undefined : inputs.chain.validators.get(address);
  return { address, serviceUrl: row?.serviceUrl ?? null };
}

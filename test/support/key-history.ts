// What the planner tests of keys that move, rotate and come back share (test/manager/key-*.unit):
// the plan fixture's keys by id, and a key store that has seen the Secret's versions in order, as
// the manager's intake does (src/manager/parts/desired-intake.ts).
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';
import { pocketKeys } from '../../src/manager/chain/pocket/pocket-key.ts';
import { keySetOfSecret } from '../../src/manager/discovery/secret-keys.ts';
import { KeyStore } from '../../src/manager/keys/key-store.ts';
import type { KeyObservation, ValidatorId } from '../../src/manager/model.ts';
import { plan, type Decision, type PlanInput } from '../../src/manager/planner/plan.ts';
import { keyOf } from './plan-fixture.ts';

/** Ids 001…n. */
export const ids = (n: number): ValidatorId[] =>
  Array.from({ length: n }, (_, i) => String(i + 1).padStart(3, '0'));

/** `id`'s fixture key as a Secret holds it (base64 of its hex). */
export const b64 = (id: ValidatorId): string =>
  Buffer.from(keyOf(id).exportPrivateKeyHex()).toString('base64');

/** The address of `id`'s fixture key. */
export const address = (id: ValidatorId): string => keyOf(id).address;

/** An observation of `id`'s fixture key, first seen at `at`. */
export const seen = (id: ValidatorId, at: number): KeyObservation => ({
  address: address(id),
  observedAt: at,
});

/** The Secret's data without `id`'s key. */
export const without = (data: Record<string, string>, id: ValidatorId): Record<string, string> =>
  Object.fromEntries(Object.entries(data).filter(([k]) => k !== id));

/** A key store that took in each version of the Secret's data, in order (old keys held). */
export function secretHistory(versions: readonly Record<string, string>[]): KeyStore {
  const store = new KeyStore(pocketIds, pocketKeys);
  versions.forEach((data, i) =>
    store.update(keySetOfSecret({ metadata: { resourceVersion: String(i + 1) }, data })),
  );
  return store;
}

/** The plan's decisions by validator id. */
export const byId = (i: PlanInput): Map<string, Decision> =>
  new Map(plan(i).flatMap((d) => (d.id === undefined ? [] : [[d.id, d]])));

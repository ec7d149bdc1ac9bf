// The control RPC's answer schemas name exactly the fields of the types the core builds them
// from: fastify serializes an answer through its schema, so a field added to `ValidatorStatus`,
// `ActionSummary`, `ScaleResult` or `Departure` but not to the schema would be dropped from the
// answer silently. Checked by the type checker (`npm run typecheck`); the test keeps the file run.
import type { Static } from 'typebox';
import { describe, expect, it } from 'vitest';
import { DepartureSchema } from '../../src/manager/rpc/routes/reads.ts';
import { ScaleResultSchema } from '../../src/manager/rpc/routes/mutations.ts';
import { ActionSchema, ValidatorSchema } from '../../src/manager/rpc/schemas.ts';
import type { Departure } from '../../src/manager/scale/departure.ts';
import type { ScaleResult } from '../../src/manager/scale/scaler.ts';
import type { ActionSummary, ValidatorStatus } from '../../src/manager/status.ts';

/** `true` when A and B have the same keys, else the keys one of them lacks. */
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never]
  ? true
  : { onlyInType: Exclude<keyof A, keyof B>; onlyInSchema: Exclude<keyof B, keyof A> };

type Validator = Static<typeof ValidatorSchema>;

const checks: {
  action: SameKeys<ActionSummary, Static<typeof ActionSchema>>;
  validator: SameKeys<ValidatorStatus, Validator>;
  validatorChain: SameKeys<ValidatorStatus['chain'], NonNullable<Validator['chain']>>;
  // The 504 answer adds `error` to the scaler's result.
  scale: SameKeys<ScaleResult & { error?: unknown }, Static<typeof ScaleResultSchema>>;
  scaleMissing: SameKeys<
    ScaleResult['missing'][number],
    Static<typeof ScaleResultSchema>['missing'][number]
  >;
  departure: SameKeys<Departure, Static<typeof DepartureSchema>>;
} = {
  action: true,
  validator: true,
  validatorChain: true,
  scale: true,
  scaleMissing: true,
  departure: true,
};

describe('answer schemas', () => {
  it('name the fields of the types the core builds', () => {
    expect(Object.values(checks)).toEqual(Object.values(checks).map(() => true));
  });
});

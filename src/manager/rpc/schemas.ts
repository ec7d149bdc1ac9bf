// The control RPC's shared schemas, declared once with TypeBox: each gives fastify's validation
// and serialization, the handlers' TypeScript types (through the type provider) and the OpenAPI
// document. Route-specific schemas live beside their routes (routes/*.ts). `Readiness` and
// `PlanView` are the types of the control plane's answers (control-plane.ts imports them). The
// answers that core modules build (status.ts, scaler.ts, scale/departure.ts) keep their types
// there; the type provider checks each handler's answer against its schema, and
// test/rpc/schema-fields.unit.test.ts that schema and type name the same fields (a field the
// schema lacks would be left out of the answer without a word).
import { Type, type Static, type TSchema } from 'typebox';

/** `schema` or JSON null (OpenAPI 3.1: `anyOf`). */
export const nullable = <T extends TSchema>(schema: T, options: { description?: string } = {}) =>
  Type.Union([schema, Type.Null()], options);

/** A string of one of `values`, as `{type: 'string', enum}` (what today's clients read). */
export const stringEnum = <const T extends readonly string[]>(
  values: T,
  options: { description?: string; default?: T[number] } = {},
) => Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

/** A reference to a shared schema by its `$id`, typed as that schema. */
export const ref = <T extends TSchema>(schema: T) =>
  Type.Unsafe<Static<T>>({ $ref: `${String((schema as { $id?: unknown }).$id)}#` });

const opt = Type.Optional;

export const ErrorSchema = Type.Object(
  {
    error: Type.Object({
      code: Type.String({
        description: 'Stable code from the error catalogue (docs/operations.md).',
      }),
      message: Type.String(),
      details: opt(
        Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true }),
      ),
    }),
  },
  { $id: 'Error' },
);
export type ErrorBody = Static<typeof ErrorSchema>;

/** The `Error` answer of a route, by reference (one component in the OpenAPI document). */
export const errorRef = ref(ErrorSchema);

export const ActionSchema = Type.Object(
  {
    seq: opt(Type.Integer()),
    validatorId: opt(Type.String()),
    kind: opt(stringEnum(['stake', 'unstake'])),
    // Typed as a string (status.ts's ActionSummary), documented with its values.
    state: opt(Type.String({ enum: ['prepared', 'sent', 'committed', 'failed', 'dropped'] })),
    mode: opt(
      Type.String({
        description: "The transport that sent it, by the chain's own name for it.",
        examples: ['rpc'],
      }),
    ),
    txHash: opt(nullable(Type.String())),
    preparedHeight: opt(Type.Integer()),
    sentHeight: opt(nullable(Type.Integer())),
    committedHeight: opt(nullable(Type.Integer())),
    resultCode: opt(nullable(Type.Integer())),
    errorCode: opt(nullable(Type.String())),
    error: opt(nullable(Type.String())),
    reason: opt(Type.String()),
    attempts: opt(Type.Integer()),
    createdAt: opt(Type.String()),
    updatedAt: opt(Type.String()),
  },
  { $id: 'Action' },
);

export const phases = [
  'pending',
  'staking',
  'staked',
  'active',
  'unstaking',
  'unstaked',
  'held',
  'failed',
  'unmanaged',
] as const;

export const ValidatorSchema = Type.Object(
  {
    key: opt(
      Type.String({ description: 'Validator id, or the address of an unmanaged validator.' }),
    ),
    id: opt(nullable(Type.String())),
    address: opt(nullable(Type.String())),
    pod: opt(nullable(Type.String())),
    ready: opt(Type.Boolean()),
    wanted: opt(Type.Boolean()),
    chain: opt(
      Type.Object({
        status: opt(stringEnum(['absent', 'staked', 'unstaking', 'unstaked', 'paused'])),
        stakedAmount: opt(nullable(Type.String())),
        unstakingHeight: opt(nullable(Type.Integer())),
        lastSignedHeight: opt(nullable(Type.Integer())),
      }),
    ),
    phase: opt(stringEnum(phases)),
    reason: opt(Type.String()),
    waitingFor: opt(nullable(Type.String())),
    pendingAction: opt(nullable(stringEnum(['stake', 'unstake']))),
    lastAction: opt(nullable(ref(ActionSchema))),
  },
  { $id: 'Validator' },
);

/** The schemas the routes refer to by `$id` (added to the server once, named in the document). */
export const sharedSchemas = [ErrorSchema, ActionSchema, ValidatorSchema] as const;

const nullableString = nullable(Type.String());

/** GET /readyz's answer (200 when ready, 503 otherwise): what `ControlPlane.readiness()` returns. */
export const ReadinessSchema = Type.Object({
  discovery: Type.String({
    enum: ['kubernetes', 'static'],
    description: 'Where the validators come from (CM_DISCOVERY)',
  }),
  ready: Type.Boolean(),
  synced: Type.Boolean(),
  leader: Type.Boolean(),
  leaderIdentity: nullableString,
  paused: Type.Boolean(),
  chain: Type.Object({
    healthy: Type.Boolean(),
    height: Type.Integer(),
    lastError: nullableString,
    lastBlockAt: nullable(Type.String(), {
      description: "When the newest block read was made, per its header's timestamp",
    }),
    trusted: Type.Boolean({
      description:
        'False while the chain went back below the highest height seen, or a seen block differs: no action is taken.',
    }),
    untrustedReason: nullableString,
    highest: Type.Integer({ description: 'The highest height seen.' }),
  }),
  minimumSet: nullable(Type.Object({ size: Type.Integer(), source: Type.String() }), {
    description: 'The minimum validator set in force (null while not known).',
  }),
  informers: Type.Array(
    Type.Object({
      name: Type.String(),
      synced: Type.Boolean(),
      restarts: Type.Integer(),
      lastError: nullableString,
    }),
  ),
  queueDepth: Type.Integer(),
  journal: Type.Object(
    {
      chain: nullable(Type.Object({ chainId: Type.String(), genesisHash: Type.String() })),
      setAside: nullable(Type.Object({ to: Type.String(), reason: Type.String() })),
      failure: Type.Optional(
        nullable(
          Type.Object({ code: Type.String(), message: Type.String(), since: Type.String() }),
          {
            description:
              'The last write of the journal that failed (JOURNAL_FULL, JOURNAL_UNAVAILABLE…), until one succeeds: no action can be taken meanwhile',
          },
        ),
      ),
    },
    {
      description:
        'The chain the journal is bound to; a journal set aside at start (of another chain, or damaged); a failing journal',
    },
  ),
});
export type Readiness = Static<typeof ReadinessSchema>;

/** GET /v1/plan's answer: what `ControlPlane.plan()` returns. */
export const PlanSchema = Type.Object({
  discovery: Type.String({ enum: ['kubernetes', 'static'] }),
  synced: Type.Boolean(),
  paused: Type.Boolean(),
  height: Type.Integer(),
  actions: Type.Array(
    Type.Object({
      key: Type.String(),
      id: nullableString,
      action: stringEnum(['stake', 'unstake']),
      waitingFor: nullableString,
      reason: Type.String(),
    }),
  ),
});
export type PlanView = Static<typeof PlanSchema>;

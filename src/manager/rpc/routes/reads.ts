// GET /v1/chain, /v1/validators, /v1/plan, /v1/actions and /v1/departures/{pod}: the manager's state. Reads
// need the token as mutations do (registered behind bearerAuth): they name every validator and
// action.
import { Type } from 'typebox';
import { VALIDATOR_ID_PATTERN } from '../../model.ts';
import type { ControlPlane } from '../control-plane.ts';
import { clientGone } from '../client-gone.ts';
import type { RoutePlugin } from '../route-plugin.ts';
import { ActionSchema, PlanSchema, ValidatorSchema, errorRef, nullable, ref } from '../schemas.ts';

/** What the read routes answer from: the chain's summary, the validators, the plan, the actions, a pod's departure. */
export type ReadControl = Pick<
  ControlPlane,
  'chain' | 'validators' | 'plan' | 'actions' | 'departure'
>;

export const DEFAULT_DEPARTURE_TIMEOUT_S = 30;
const DEFAULT_ACTIONS_LIMIT = 50;

const ValidatorsSchema = Type.Object({
  validators: Type.Optional(Type.Array(ref(ValidatorSchema))),
});

const ActionsQuerySchema = Type.Object(
  {
    limit: Type.Optional(
      Type.String({ pattern: '^(?:[1-9]\\d{0,2}|1000)$', description: '1-1000 (default 50).' }),
    ),
    before: Type.Optional(
      Type.String({ pattern: '^[1-9]\\d{0,15}$', description: 'Sequence number to page before.' }),
    ),
    validator: Type.Optional(
      Type.String({ pattern: VALIDATOR_ID_PATTERN, description: 'Only this validator id.' }),
    ),
  },
  { additionalProperties: false },
);

const ActionsPageSchema = Type.Object({
  actions: Type.Optional(Type.Array(ref(ActionSchema))),
  next: Type.Optional(
    nullable(Type.Integer(), {
      description: 'Pass as `before` for the next (older) page; null on the last page.',
    }),
  ),
});

const DepartureParamsSchema = Type.Object({
  pod: Type.String({
    maxLength: 253,
    pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$',
    description: 'The pod name (a DNS-1123 subdomain).',
  }),
});

const DepartureQuerySchema = Type.Object(
  {
    timeoutSeconds: Type.Optional(
      Type.String({
        pattern: '^(0|[1-9]\\d?|[12]\\d\\d|300)$',
        description: 'Long-poll up to this many seconds (0–300, default 30) for a final answer.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const DepartureSchema = Type.Object({
  pod: Type.String(),
  validatorId: nullable(Type.String()),
  departed: Type.Boolean({ description: "The pod's validator has left the active set." }),
  final: Type.Boolean({
    description:
      'Waiting cannot change the answer: the pod may go (departed, or the manager will never unstake it).',
  }),
  code: Type.String({
    description:
      'LEFT_SET; final without departing: STILL_WANTED, BELOW_MINIMUM_SET, KEY_MISSING, KEY_INVALID, KEY_DUPLICATE, HELD, UNMANAGED, UNSTAKE_FAILED, NOT_A_VALIDATOR_POD; not final: LEAVING, PAUSED, CHAIN_UNTRUSTED, CHAIN_UNAVAILABLE.',
  }),
  reason: Type.String(),
  height: Type.Integer(),
});

const ChainSchema = Type.Object({
  name: Type.String({ description: 'The chain CM_CHAIN selected (e.g. pocket-v1).' }),
  ids: Type.Object(
    {
      prefix: Type.String(),
      width: Type.Integer({
        minimum: 0,
        description: 'Zero-padded to this many digits (0: none).',
      }),
      min: Type.Integer({ minimum: 0 }),
      max: Type.Integer({ minimum: 0 }),
    },
    {
      description:
        'How the chain writes validator ids: prefix + number (min…max), padded to width.',
    },
  ),
  stake: Type.String({
    description:
      'What the manager stakes, as the chain writes it: the amount with its denomination, and the fields of its stakes.',
  }),
});

export const readRoutes: RoutePlugin<{ control: ReadControl }> = (app, { control }) => {
  app.get(
    '/v1/chain',
    {
      schema: {
        summary: "The chain and its validator id format (what a client reads a person's `4` with)",
        response: { 200: ChainSchema },
      },
    },
    () => control.chain(),
  );

  app.get(
    '/v1/validators',
    {
      schema: {
        summary: 'Every validator: pod, chain row, phase and reason',
        response: { 200: ValidatorsSchema },
      },
    },
    () => ({ validators: control.validators() }),
  );

  app.get(
    '/v1/plan',
    {
      schema: {
        summary: 'Dry run: the actions the planner would take now, with reasons',
        response: { 200: PlanSchema },
      },
    },
    () => control.plan(),
  );

  app.get(
    '/v1/actions',
    {
      schema: {
        summary: 'The action journal, newest first (page on with `before=<next>`)',
        querystring: ActionsQuerySchema,
        response: { 200: ActionsPageSchema, 400: errorRef },
      },
    },
    (request) =>
      control.actions({
        limit:
          request.query.limit === undefined ? DEFAULT_ACTIONS_LIMIT : Number(request.query.limit),
        before: request.query.before === undefined ? undefined : Number(request.query.before),
        validator: request.query.validator,
      }),
  );

  // What a validator pod's preStop hook waits on (`cluster-manager await-departure`): long-polls
  // until the answer is final — the pod's validator has left the active set, or the manager
  // knows it never will — or N seconds have passed. The rule is in scale/departure.ts.
  app.get(
    '/v1/departures/:pod',
    {
      schema: {
        summary:
          "May this validator pod go? Long-polls until its validator has left the active set, or the manager knows it never will (the preStop hook's question)",
        description:
          '`final: true` — the pod may go (`departed`, or a code saying why the validator stays staked); `final: false` — still leaving, ask again.',
        params: DepartureParamsSchema,
        querystring: DepartureQuerySchema,
        response: { 200: DepartureSchema, 400: errorRef, 503: errorRef },
      },
    },
    async (request, reply) => {
      const timeoutSeconds =
        request.query.timeoutSeconds === undefined
          ? DEFAULT_DEPARTURE_TIMEOUT_S
          : Number(request.query.timeoutSeconds);
      const gone = clientGone(reply.raw);
      try {
        return await control.departure(request.params.pod, timeoutSeconds * 1000, gone.signal);
      } finally {
        gone.release();
      }
    },
  );
  return Promise.resolve();
};

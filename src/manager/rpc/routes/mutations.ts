// POST /v1/scale, /v1/pause, /v1/resume and /v1/trigger-view: what changes the cluster or the
// manager. Registered behind bearerAuth; each schema lists the catalogue errors it may answer.
import { Type } from 'typebox';
import { ManagerError } from '../../errors.ts';
import { ScaleOutcome, type ScaleResult } from '../../scale/scaler.ts';
import { clientGone } from '../client-gone.ts';
import type { ControlPlane } from '../control-plane.ts';
import type { RoutePlugin } from '../route-plugin.ts';
import { errorRef, stringEnum } from '../schemas.ts';

/** What the mutation routes do: scale, pause or resume, move a manual pacemaker's view (and the chain's id format). */
export type MutationControl = Pick<ControlPlane, 'scale' | 'setPaused' | 'triggerView' | 'chain'>;

const waits = ['none', 'staked', 'active'] as const;

const ScaleBodySchema = Type.Object(
  {
    replicas: Type.Integer({
      minimum: 0,
      description:
        "Validators the StatefulSet should run: at most the chain's highest id number (`ids.max` of GET /v1/chain), or 400 BAD_REQUEST.",
    }),
    wait: Type.Optional(
      stringEnum(waits, {
        default: 'none',
        description: 'Answer once the validators are staked, or signing blocks.',
      }),
    ),
    timeoutSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600, default: 300 })),
    drive: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'Trigger views while waiting (manual pacemaker).',
      }),
    ),
    force: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Go ahead over the safety refusals: below the minimum validator set (lowering it), over a running drain (superseding it), past validators whose key problem hides whether they are staked.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const ScaleResultSchema = Type.Object({
  statefulSet: Type.String(),
  previous: Type.Integer({ description: 'Replicas before this request.' }),
  replicas: Type.Integer(),
  wait: stringEnum(waits),
  outcome: stringEnum(['done', 'draining', 'timeout'], {
    description:
      '`done` (200): the target holds; `draining` (202): a scale-down with `wait: none` goes on in the background; `timeout` (504).',
  }),
  done: Type.Boolean(),
  elapsedMs: Type.Optional(Type.Integer()),
  drained: Type.Optional(
    Type.Array(Type.String(), {
      description: 'Validators drained on the way down (being drained, with `outcome: draining`).',
    }),
  ),
  missing: Type.Array(
    Type.Object({
      id: Type.Optional(Type.String()),
      phase: Type.Optional(Type.String()),
      reason: Type.Optional(Type.String()),
    }),
    { description: 'Who is not where the request wants them yet (empty when done).' },
  ),
  height: Type.Optional(Type.Integer({ description: 'Chain height when the answer was made.' })),
  error: Type.Optional(
    Type.Object(
      {
        code: Type.Optional(Type.String()),
        message: Type.Optional(Type.String()),
      },
      { description: 'With a 504: the catalogue code SCALE_TIMEOUT and who is missing.' },
    ),
  ),
});

const PauseSchema = Type.Object({ paused: Type.Optional(Type.Boolean()) });

const TriggerViewSchema = Type.Object({
  height: Type.Optional(Type.Integer({ description: 'Height after the view.' })),
  committed: Type.Optional(
    Type.Boolean({ description: 'A new block committed within 5 s of the trigger.' }),
  ),
});

/** Error answers every mutation may give: a bad body, an unexpected failure (401: bearerAuth). */
const errors = { 400: errorRef, 500: errorRef };

export const mutationRoutes: RoutePlugin<{ control: MutationControl }> = (app, { control }) => {
  app.post(
    '/v1/scale',
    {
      schema: {
        summary:
          'Scale the validator StatefulSet (draining first when scaling down) and optionally wait for the chain',
        description:
          '200: the target holds. 202: a scale-down with `wait: none` marked the leaving pods; their validators are unstaked and the pods go once they have left the set. 504: the wait ran out; `missing` lists who is not there yet.',
        body: ScaleBodySchema,
        response: {
          200: ScaleResultSchema,
          202: ScaleResultSchema,
          504: ScaleResultSchema,
          ...errors,
          409: errorRef,
          501: errorRef,
          503: errorRef,
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      // Pod ordinal n is id number n + 1: the highest pod of `replicas` needs id number `replicas`.
      const chain = control.chain();
      if (body.replicas > chain.ids.max)
        throw new ManagerError(
          'BAD_REQUEST',
          `replicas: at most ${chain.ids.max} (the highest id number of chain ${chain.name}), got ${body.replicas}`,
        );
      const gone = clientGone(reply.raw);
      let result: ScaleResult;
      try {
        result = await control.scale(
          {
            replicas: body.replicas,
            wait: body.wait ?? 'none',
            timeoutSeconds: body.timeoutSeconds ?? 300,
            drive: body.drive ?? false,
            force: body.force ?? false,
          },
          gone.signal,
        );
      } finally {
        gone.release();
      }
      if (result.outcome === ScaleOutcome.done) return result;
      if (result.outcome === ScaleOutcome.draining) {
        void reply.status(202);
        return result;
      }
      void reply.status(504);
      return { ...result, error: timeoutError(result) };
    },
  );

  for (const [url, paused, summary] of [
    [
      '/v1/pause',
      true,
      'Stop every manager taking actions (reads go on); answered by the leader once recorded on the Lease (kept across restarts, failovers and new pods); a follower answers 503 NOT_LEADER',
    ],
    ['/v1/resume', false, 'Take actions again (the leader answers, as for pause)'],
  ] as const) {
    app.post(
      url,
      { schema: { summary, response: { 200: PauseSchema, ...errors, 503: errorRef } } },
      async () => {
        await control.setPaused(paused);
        return { paused };
      },
    );
  }

  app.post(
    '/v1/trigger-view',
    {
      schema: {
        summary:
          "Commit the next block on a manual-pacemaker chain, the chain's own way (its sender's `viewTrigger`, docs/configuration.md)",
        response: {
          200: TriggerViewSchema,
          ...errors,
          502: errorRef,
          503: errorRef,
          504: errorRef,
        },
      },
    },
    async (request, reply) => {
      const gone = clientGone(reply.raw);
      try {
        return await control.triggerView(gone.signal);
      } catch (error: unknown) {
        if (error instanceof ManagerError) throw error;
        // The chain's own error text stays in the log; the caller gets the catalogue's code.
        request.log.warn({ err: error }, 'trigger view failed');
        throw new ManagerError(
          'CHAIN_UNAVAILABLE',
          'trigger view failed: the chain did not accept it',
          { cause: error },
        );
      } finally {
        gone.release();
      }
    },
  );
  return Promise.resolve();
};

function timeoutError(result: ScaleResult): { code: 'SCALE_TIMEOUT'; message: string } {
  const ids = result.missing.map((m) => m.id).join(', ');
  return {
    code: 'SCALE_TIMEOUT',
    message: `${result.statefulSet} did not reach ${result.replicas} ${result.wait} validators in time; not there yet: ${ids || '-'}`,
  };
}

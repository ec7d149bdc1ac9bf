// GET /v1/departures/{pod}?timeoutSeconds=N: what a validator pod's preStop hook waits on
// (`cluster-manager await-departure`). Long-polls until the answer is final — the pod's validator
// has left the active set, or the manager knows it never will — or N seconds have passed. The
// contract is in docs/control-rpc.md; the rule in scale/departure.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, RawServerDefault } from 'fastify';
import type { Logger } from '../logger.ts';
import type { ControlPlane } from './control-plane.ts';
import { departureParamsSchema, departureQuerySchema, departureSchema } from './schemas.ts';

export const DEFAULT_DEPARTURE_TIMEOUT_S = 30;

export function registerDepartures(
  app: ControlApp,
  options: {
    control: ControlPlane;
    authorize: (request: { headers: { authorization?: string | undefined } }) => Promise<void>;
  },
): void {
  app.get<{ Params: { pod: string }; Querystring: { timeoutSeconds?: string } }>(
    '/v1/departures/:pod',
    {
      schema: {
        security: [{ bearer: [] }],
        summary:
          "May this validator pod go? Long-polls until its validator has left the active set, or the manager knows it never will (the preStop hook's question)",
        description:
          '`final: true` — the pod may go (`departed`, or a code saying why the validator stays staked); `final: false` — still leaving, ask again.',
        params: departureParamsSchema,
        querystring: departureQuerySchema,
        response: {
          200: departureSchema,
          400: { $ref: 'Error#' },
          401: { $ref: 'Error#' },
          503: { $ref: 'Error#' },
        },
      },
      onRequest: options.authorize,
    },
    async (request, reply) => {
      const timeoutSeconds =
        request.query.timeoutSeconds === undefined
          ? DEFAULT_DEPARTURE_TIMEOUT_S
          : Number(request.query.timeoutSeconds);
      const gone = aborter(reply.raw);
      try {
        return await options.control.departure(
          request.params.pod,
          timeoutSeconds * 1000,
          gone.signal,
        );
      } finally {
        gone.release();
      }
    },
  );
}

function aborter(response: ServerResponse): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const onClose = (): void => {
    if (!response.writableFinished) controller.abort(new Error('client went away'));
  };
  response.on('close', onClose);
  return { signal: controller.signal, release: () => response.off('close', onClose) };
}

/** The control RPC's fastify instance (with the manager's pino logger). */
type ControlApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger>;

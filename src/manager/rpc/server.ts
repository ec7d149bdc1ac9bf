// The control RPC (fastify): health, readiness, metrics, status, plan, journal, event stream,
// departures, scale, pause/resume and trigger-view. `buildServer` does not listen (tests use
// inject()); `startControlServer` does. Unexpected errors are logged and answered with a generic
// 500: their messages may carry CLI output or input. Every /v1 route needs the bearer token; the
// probes (/healthz, /readyz), /metrics and /openapi.json do not.
import type { ServerResponse } from 'node:http';
import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyError } from 'fastify';
import { describeError, ManagerError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import {
  ScaleOutcome,
  type ScaleRequest,
  type ScaleResult,
  type WaitFor,
} from '../scale/scaler.ts';
import { checkBearer } from './auth.ts';
import type { ControlPlane } from './control-plane.ts';
import { registerDepartures } from './departure-route.ts';
import { registerEventStream } from './event-stream-route.ts';
import { answerClientError, answerFrameworkError } from './http-errors.ts';
import {
  actionSchema,
  actionsPageSchema,
  actionsQuerySchema,
  errorSchema,
  healthSchema,
  metricsResponse,
  openApiResponse,
  pauseSchema,
  planSchema,
  readinessSchema,
  scaleBodySchema,
  scaleResultSchema,
  triggerViewSchema,
  validatorSchema,
  validatorsSchema,
} from './schemas.ts';

export interface ServerDeps {
  control: ControlPlane;
  token: string | undefined;
  logger: Logger;
  version: string;
  /** Bounds of the event stream (defaults: MAX_EVENT_STREAMS, MAX_UNSENT_BYTES). */
  streams?: { max?: number; maxUnsentBytes?: number };
}

const error = { $ref: 'Error#' } as const;
/** Error answers every mutation may give: a bad body, no token, an unexpected failure. */
const errors = { 400: error, 401: error, 500: error };
const BODY_LIMIT = 4096;

export async function buildServer(deps: ServerDeps) {
  const app = Fastify({
    loggerInstance: deps.logger.child({ component: 'rpc' }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    return503OnClosing: true,
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
    ajv: {
      customOptions: {
        coerceTypes: false,
        removeAdditional: false,
        useDefaults: true,
        allErrors: false,
      },
    },
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'cluster-manager control RPC',
        version: deps.version,
        description:
          'Scale validators and see their state. Every /v1 route needs `Authorization: Bearer <token>`.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    },
    // Shared schemas keep their names (Error, Action, Validator) in the document.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
  });
  app.addSchema(errorSchema);
  app.addSchema(actionSchema);
  app.addSchema(validatorSchema);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ManagerError) {
      if (error.status >= 500)
        request.log.error({ code: error.code, error: error.message }, 'request failed');
      else request.log.info({ code: error.code }, 'request refused');
      return reply.status(error.status).send({
        error: {
          code: error.code,
          message: error.message,
          ...(error.details ? { details: error.details } : {}),
        },
      });
    }
    // An oversized body is 413 (RFC 9110 §15.5.14), as the node RPC answers it, not a bad request.
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return reply
        .status(413)
        .send({ error: { code: 'BODY_TOO_LARGE', message: badRequest(error) } });
    if (
      error.validation !== undefined ||
      (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
    ) {
      return reply.status(400).send({ error: { code: 'BAD_REQUEST', message: badRequest(error) } });
    }
    request.log.error({ error: describeError(error) }, 'unexpected error');
    return reply
      .status(500)
      .send({ error: { code: 'INTERNAL', message: 'internal error; see the manager log' } });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({
      error: {
        code: 'NOT_FOUND',
        message: `no route ${request.method} ${(request.url.split('?')[0] ?? '').slice(0, 200)}`,
      },
    }),
  );

  const mutate = { security: [{ bearer: [] }] };
  /** Reads of /v1 need the token as mutations do: the status names every validator and action. */
  const read = { security: [{ bearer: [] }] };
  // On request, before the body is read or validated: without the token nothing else is looked at.
  const authorize = (request: {
    headers: { authorization?: string | undefined };
  }): Promise<void> => {
    checkBearer(request.headers.authorization, deps.token);
    return Promise.resolve();
  };
  const unauthorized = { 401: error };

  app.get(
    '/healthz',
    { schema: { summary: 'Liveness: the process answers', response: { 200: healthSchema } } },
    () => ({ status: 'ok', version: deps.version }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: caches synced, chain answered, queue running (503 otherwise)',
        response: { 200: readinessSchema, 503: readinessSchema },
      },
    },
    (_request, reply) => {
      const readiness = deps.control.readiness();
      return reply.status(readiness.ready ? 200 : 503).send(readiness);
    },
  );

  app.get(
    '/metrics',
    {
      schema: { summary: 'Prometheus metrics (text exposition format)', response: metricsResponse },
    },
    async (_request, reply) => {
      const { contentType, body } = await deps.control.metrics();
      return reply.type(contentType).send(body);
    },
  );

  app.get(
    '/openapi.json',
    { schema: { summary: 'This API as an OpenAPI 3.1 document', response: openApiResponse } },
    () => app.swagger(),
  );

  app.get(
    '/v1/validators',
    {
      schema: {
        ...read,
        summary: 'Every validator: pod, chain row, phase and reason',
        response: { 200: validatorsSchema, ...unauthorized },
      },
      onRequest: authorize,
    },
    () => ({ validators: deps.control.validators() }),
  );

  app.get(
    '/v1/plan',
    {
      schema: {
        ...read,
        summary: 'Dry run: the actions the planner would take now, with reasons',
        response: { 200: planSchema, ...unauthorized },
      },
      onRequest: authorize,
    },
    () => deps.control.plan(),
  );

  app.get<{ Querystring: { limit?: string; before?: string; validator?: string } }>(
    '/v1/actions',
    {
      schema: {
        ...read,
        summary: 'The action journal, newest first (page on with `before=<next>`)',
        querystring: actionsQuerySchema,
        response: { 200: actionsPageSchema, 400: error, ...unauthorized },
      },
      onRequest: authorize,
    },
    (request) =>
      deps.control.actions({
        limit: request.query.limit === undefined ? 50 : Number(request.query.limit),
        before: request.query.before === undefined ? undefined : Number(request.query.before),
        validator: request.query.validator,
      }),
  );

  registerEventStream(app, {
    control: deps.control,
    authorize,
    ...(deps.streams?.max === undefined ? {} : { maxStreams: deps.streams.max }),
    ...(deps.streams?.maxUnsentBytes === undefined
      ? {}
      : { maxUnsentBytes: deps.streams.maxUnsentBytes }),
  });
  registerDepartures(app, { control: deps.control, authorize });

  app.post<{
    Body: {
      replicas: number;
      wait?: WaitFor;
      timeoutSeconds?: number;
      drive?: boolean;
      force?: boolean;
    };
  }>(
    '/v1/scale',
    {
      schema: {
        ...mutate,
        summary:
          'Scale the validator StatefulSet (draining first when scaling down) and optionally wait for the chain',
        description:
          '200: the target holds. 202: a scale-down with `wait: none` marked the leaving pods; their validators are unstaked and the pods go once they have left the set. 504: the wait ran out; `missing` lists who is not there yet.',
        body: scaleBodySchema,
        response: {
          200: scaleResultSchema,
          202: scaleResultSchema,
          504: scaleResultSchema,
          ...errors,
          409: error,
          501: error,
          503: error,
        },
      },
      onRequest: authorize,
    },
    async (request, reply) => {
      const body = request.body;
      const scale: ScaleRequest = {
        replicas: body.replicas,
        wait: body.wait ?? 'none',
        timeoutSeconds: body.timeoutSeconds ?? 300,
        drive: body.drive ?? false,
        force: body.force ?? false,
      };
      const gone = clientGone(reply.raw);
      let result: ScaleResult;
      try {
        result = await deps.control.scale(scale, gone.signal);
      } finally {
        gone.release();
      }
      if (result.outcome === ScaleOutcome.done) return reply.status(200).send(result);
      if (result.outcome === ScaleOutcome.draining) return reply.status(202).send(result);
      return reply.status(504).send({ ...result, error: timeoutError(result) });
    },
  );

  app.post(
    '/v1/pause',
    {
      schema: {
        ...mutate,
        summary: 'Stop taking actions (reads go on; kept across restarts)',
        response: { 200: pauseSchema, ...errors },
      },
      onRequest: authorize,
    },
    () => {
      deps.control.setPaused(true);
      return { paused: true };
    },
  );
  app.post(
    '/v1/resume',
    {
      schema: {
        ...mutate,
        summary: 'Take actions again',
        response: { 200: pauseSchema, ...errors },
      },
      onRequest: authorize,
    },
    () => {
      deps.control.setPaused(false);
      return { paused: false };
    },
  );
  app.post(
    '/v1/trigger-view',
    {
      schema: {
        ...mutate,
        summary:
          "Commit the next block on a manual-pacemaker chain: the chain's debug TriggerView (RPC mode) or `p1 Debug TriggerView` (CLI mode)",
        response: { 200: triggerViewSchema, ...errors, 502: error, 503: error, 504: error },
      },
      onRequest: authorize,
    },
    async (request, reply) => {
      const gone = clientGone(reply.raw);
      try {
        return await deps.control.triggerView(gone.signal);
      } catch (error: unknown) {
        if (error instanceof ManagerError) throw error;
        // The chain's own error text stays in the log; the caller gets the catalogue's code.
        request.log.warn({ error: describeError(error) }, 'trigger view failed');
        throw new ManagerError(
          'CHAIN_UNAVAILABLE',
          'trigger view failed: the chain did not accept it',
          {
            cause: error,
          },
        );
      } finally {
        gone.release();
      }
    },
  );
  return app;
}

/** Aborts when the client closes the connection before the answer is written. */
function clientGone(response: ServerResponse): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const onClose = (): void => {
    if (!response.writableFinished) controller.abort(new Error('client went away'));
  };
  response.on('close', onClose);
  return { signal: controller.signal, release: () => response.off('close', onClose) };
}

function timeoutError(result: ScaleResult): { code: 'SCALE_TIMEOUT'; message: string } {
  const ids = result.missing.map((m) => m.id).join(', ');
  return {
    code: 'SCALE_TIMEOUT',
    message: `${result.statefulSet} did not reach ${result.replicas} ${result.wait} validators in time; not there yet: ${ids || '-'}`,
  };
}

/** Messages for 4xx errors fastify raises: fixed texts, never the caller's input echoed. */
function badRequest(error: FastifyError): string {
  if (error.validation !== undefined) return `invalid request: ${error.message}`;
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `request body too large (limit ${BODY_LIMIT} bytes)`;
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'unsupported content type; send application/json';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'the body is empty; send a JSON object';
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'the body is not valid JSON';
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'the body does not match its Content-Length';
    default:
      return error instanceof SyntaxError ? 'the body is not valid JSON' : 'bad request';
  }
}

export type ControlServer = Awaited<ReturnType<typeof buildServer>>;

/** Builds and starts listening; resolves with the URL and a close function. */
export async function startControlServer(
  deps: ServerDeps,
  address: { host: string; port: number },
): Promise<{ url: string; close(): Promise<void>; app: ControlServer }> {
  const app = await buildServer(deps);
  await app.listen({ host: address.host, port: address.port });
  const bound = app.server.address();
  const port = typeof bound === 'object' && bound !== null ? bound.port : address.port;
  const host = address.host === '0.0.0.0' || address.host === '::' ? '127.0.0.1' : address.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    app,
    close: async () => {
      await app.close();
    },
  };
}

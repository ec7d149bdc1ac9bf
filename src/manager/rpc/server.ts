// The control RPC (fastify): health, readiness, metrics, status, plan, journal, event stream,
// scale, pause/resume and trigger-view. `buildServer` does not listen (tests use inject());
// `startControlServer` does. Unexpected errors are logged and answered with a generic 500:
// their messages may carry CLI output or input.
import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyError } from 'fastify';
import { describeError, ManagerError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ScaleRequest, WaitFor } from '../scale/scaler.ts';
import { checkBearer } from './auth.ts';
import type { ControlPlane } from './control-plane.ts';
import {
  actionSchema,
  actionsQuerySchema,
  errorSchema,
  planSchema,
  readinessSchema,
  scaleBodySchema,
  scaleResultSchema,
  validatorSchema,
} from './schemas.ts';

export interface ServerDeps {
  control: ControlPlane;
  token: string | undefined;
  logger: Logger;
  version: string;
}

const errors = {
  400: { $ref: 'Error#' },
  401: { $ref: 'Error#' },
  409: { $ref: 'Error#' },
  500: { $ref: 'Error#' },
  503: { $ref: 'Error#' },
};
const HEARTBEAT_MS = 15_000;

export async function buildServer(deps: ServerDeps) {
  const app = Fastify({
    loggerInstance: deps.logger.child({ component: 'rpc' }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 4096,
    return503OnClosing: true,
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
          'Scale validators and see their state. Mutations need `Authorization: Bearer <token>`.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
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
    if (
      error.validation !== undefined ||
      (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
    ) {
      const message =
        error.validation !== undefined
          ? `invalid request: ${error.message}`
          : error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
            ? 'request body too large (limit 4096 bytes)'
            : error.message;
      return reply.status(400).send({ error: { code: 'BAD_REQUEST', message } });
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
        message: `no route ${request.method} ${request.url.split('?')[0] ?? ''}`,
      },
    }),
  );

  // Open event streams, ended when the server closes (they would otherwise hold it open).
  const streams = new Set<{ close(): void; end(): void }>();
  app.addHook('preClose', (done) => {
    for (const stream of streams) {
      stream.close();
      stream.end();
    }
    streams.clear();
    done();
  });

  const mutate = { security: [{ bearer: [] }] };
  const authorize = (request: {
    headers: { authorization?: string | undefined };
  }): Promise<void> => {
    checkBearer(request.headers.authorization, deps.token);
    return Promise.resolve();
  };

  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness',
        response: { 200: { type: 'object', properties: { status: { type: 'string' } } } },
      },
    },
    () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: caches synced, chain answered, queue running',
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
    { schema: { summary: 'Prometheus metrics', hide: false } },
    async (_request, reply) => {
      const { contentType, body } = await deps.control.metrics();
      return reply.type(contentType).send(body);
    },
  );

  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());

  app.get(
    '/v1/validators',
    {
      schema: {
        summary: 'Every validator: pod, chain row, phase and reason',
        response: {
          200: {
            type: 'object',
            properties: { validators: { type: 'array', items: { $ref: 'Validator#' } } },
          },
        },
      },
    },
    () => ({
      validators: deps.control.validators(),
    }),
  );

  app.get(
    '/v1/plan',
    {
      schema: {
        summary: 'Dry run: the actions the planner would take now, with reasons',
        response: { 200: planSchema },
      },
    },
    () => deps.control.plan(),
  );

  app.get<{ Querystring: { limit?: string; before?: string; validator?: string } }>(
    '/v1/actions',
    {
      schema: {
        summary: 'The action journal, newest first',
        querystring: actionsQuerySchema,
        response: {
          200: {
            type: 'object',
            properties: {
              actions: { type: 'array', items: { $ref: 'Action#' } },
              next: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
            },
          },
          400: { $ref: 'Error#' },
        },
      },
    },
    (request) =>
      deps.control.actions({
        limit: request.query.limit === undefined ? 50 : Number(request.query.limit),
        before: request.query.before === undefined ? undefined : Number(request.query.before),
        validator: request.query.validator,
      }),
  );

  app.get(
    '/v1/events',
    {
      schema: {
        summary:
          'Server-sent events: phase changes (`phase`), actions (`action`), chain heights (`height`), pause (`paused`)',
      },
    },
    (request, reply) => {
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      const send = (event: string, data: unknown): void =>
        void raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      send('hello', { height: deps.control.readiness().chain.height });
      const onPhase = (change: unknown): void => send('phase', change);
      const onAction = (record: {
        seq: number;
        validatorId: string;
        kind: string;
        state: string;
        txHash?: string | undefined;
      }): void =>
        send('action', {
          seq: record.seq,
          validatorId: record.validatorId,
          kind: record.kind,
          state: record.state,
          txHash: record.txHash ?? null,
        });
      const onHeight = (height: number): void => send('height', { height });
      const onPaused = (paused: boolean): void => send('paused', { paused });
      deps.control.events.on('phase', onPhase);
      deps.control.events.on('action', onAction);
      deps.control.events.on('height', onHeight);
      deps.control.events.on('paused', onPaused);
      const heartbeat = setInterval(() => raw.write(': keep-alive\n\n'), HEARTBEAT_MS);
      const close = (): void => {
        clearInterval(heartbeat);
        deps.control.events.off('phase', onPhase);
        deps.control.events.off('action', onAction);
        deps.control.events.off('height', onHeight);
        deps.control.events.off('paused', onPaused);
      };
      const stream = { close, end: () => raw.end() };
      streams.add(stream);
      request.raw.on('close', () => {
        streams.delete(stream);
        close();
      });
    },
  );

  app.post<{
    Body: { replicas: number; wait?: WaitFor; timeoutSeconds?: number; drive?: boolean };
  }>(
    '/v1/scale',
    {
      schema: {
        ...mutate,
        summary:
          'Scale the validator StatefulSet (draining first when scaling down) and optionally wait for the chain',
        body: scaleBodySchema,
        response: {
          200: scaleResultSchema,
          504: scaleResultSchema,
          501: { $ref: 'Error#' },
          ...errors,
        },
      },
      preHandler: authorize,
    },
    async (request, reply) => {
      const body = request.body;
      const scale: ScaleRequest = {
        replicas: body.replicas,
        wait: body.wait ?? 'none',
        timeoutSeconds: body.timeoutSeconds ?? 300,
        drive: body.drive ?? false,
      };
      const controller = new AbortController();
      request.raw.on('close', () => {
        if (!reply.sent) controller.abort(new Error('client went away'));
      });
      const result = await deps.control.scale(scale, controller.signal);
      return reply.status(result.done ? 200 : 504).send(result);
    },
  );

  const pauseSchema = {
    response: { 200: { type: 'object', properties: { paused: { type: 'boolean' } } }, ...errors },
  };
  app.post(
    '/v1/pause',
    {
      schema: { ...mutate, ...pauseSchema, summary: 'Stop taking actions (reads go on)' },
      preHandler: authorize,
    },
    () => {
      deps.control.setPaused(true);
      return { paused: true };
    },
  );
  app.post(
    '/v1/resume',
    { schema: { ...mutate, ...pauseSchema, summary: 'Take actions again' }, preHandler: authorize },
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
        summary: 'Commit the next block on a manual-pacemaker chain (debug TriggerView)',
        response: {
          200: { type: 'object', properties: { height: { type: 'integer' } } },
          502: { $ref: 'Error#' },
          ...errors,
        },
      },
      preHandler: authorize,
    },
    async (request) => {
      const controller = new AbortController();
      request.raw.on('close', () => controller.abort(new Error('client went away')));
      try {
        return await deps.control.triggerView(controller.signal);
      } catch (error: unknown) {
        if (error instanceof ManagerError) throw error;
        throw new ManagerError(
          'CHAIN_UNAVAILABLE',
          `trigger view failed: ${describeError(error)}`,
          { cause: error },
        );
      }
    },
  );
  return app;
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

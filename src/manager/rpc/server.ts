// The control RPC (fastify): route plugins for health (probes, metrics, the OpenAPI document),
// reads, participation, mutations, the event stream and the page at /ui/, each route with one TypeBox schema that gives its
// validation, its handler's types and its part of the OpenAPI document. Every /v1 route sits
// behind the bearer token (bearerAuth); /healthz, /readyz, /metrics and /openapi.json do not.
// Every state-changing route refuses what a web page can make a browser send (browserGuard).
// `buildServer` does not listen (tests use inject()); `startControlServer` does.
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController } from 'fastify';
import type { Logger } from '../logger.ts';
import {
  capConnections,
  HEADERS_CHECK_INTERVAL_MS,
  type ConnectionLimits,
} from './connection-cap.ts';
import type { ParticipationSource } from '../participation/participation.ts';
import { bearerAuth } from './auth.ts';
import { browserGuard } from './browser-guard.ts';
import type { ControlPlane } from './control-plane.ts';
import {
  answerClientError,
  answerError,
  answerFrameworkError,
  answerNotFound,
  BODY_LIMIT,
} from './http-errors.ts';
import { eventRoutes } from './routes/events.ts';
import { healthRoutes } from './routes/health.ts';
import { mutationRoutes } from './routes/mutations.ts';
import { ParticipationHeightSchema, participationRoutes } from './routes/participation.ts';
import { readRoutes } from './routes/reads.ts';
import { uiRoutes } from './routes/ui.ts';
import { sharedSchemas } from './schemas.ts';

export interface ServerDeps {
  control: ControlPlane;
  token: string | undefined;
  logger: Logger;
  version: string;
  /** Bounds of the event stream (defaults: MAX_EVENT_STREAMS, MAX_UNSENT_BYTES). */
  streams?: { max?: number; maxUnsentBytes?: number };
  /**
   * The connection cap and headers timeout (CM_RPC_MAX_CONNECTIONS, CM_RPC_HEADERS_TIMEOUT;
   * defaults: MAX_CONNECTIONS, HEADERS_TIMEOUT_MS in connection-cap.ts).
   */
  connections?: ConnectionLimits;
  /** The participation read and `block` events (without it the read answers 503). */
  participation?: ParticipationSource;
}

export async function buildServer(deps: ServerDeps) {
  const app = Fastify({
    loggerInstance: deps.logger.child({ component: 'rpc' }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    // Node enforces the headers timeout on this period (30 s by default): with it, a 10 s timeout
    // closed a stalled request after ~30 s (connection-cap.ts).
    http: { connectionsCheckingInterval: HEADERS_CHECK_INTERVAL_MS },
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
  }).withTypeProvider<TypeBoxTypeProvider>();
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
  for (const schema of [...sharedSchemas, ParticipationHeightSchema]) app.addSchema(schema);
  app.setErrorHandler(answerError);
  app.setNotFoundHandler(answerNotFound);

  // First: a web page's request to change something is refused before anything else is read.
  await app.register(browserGuard);
  await app.register(healthRoutes, { control: deps.control, version: deps.version });
  await app.register(uiRoutes);
  await app.register(async (v1) => {
    await v1.register(bearerAuth, { token: deps.token });
    await v1.register(readRoutes, { control: deps.control });
    await v1.register(participationRoutes, { participation: deps.participation });
    await v1.register(eventRoutes, {
      control: deps.control,
      maxStreams: deps.streams?.max,
      maxUnsentBytes: deps.streams?.maxUnsentBytes,
      blocks: deps.participation?.onBlock,
    });
    await v1.register(mutationRoutes, { control: deps.control });
  });
  return app;
}

export type ControlServer = Awaited<ReturnType<typeof buildServer>>;

/** Builds and starts listening; resolves with the URL and a close function. */
export async function startControlServer(
  deps: ServerDeps,
  address: { host: string; port: number },
): Promise<{ url: string; close(): Promise<void>; app: ControlServer }> {
  const app = await buildServer(deps);
  capConnections(app.server, deps.logger, deps.connections);
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

// GET /healthz, /readyz, /metrics and /openapi.json: open to anyone who reaches the port (the
// probes and the scraper carry no token; none of these names a validator or an action).
import { Type } from 'typebox';
import type { ControlPlane } from '../control-plane.ts';
import type { RoutePlugin } from '../route-plugin.ts';
import { ReadinessSchema } from '../schemas.ts';

/** The probes' and the scraper's answers: readiness and the metrics, nothing else. */
export type HealthControl = Pick<ControlPlane, 'readiness' | 'metrics'>;

const HealthSchema = Type.Object({
  status: Type.Optional(Type.Unsafe<'ok'>({ type: 'string', enum: ['ok'] })),
  version: Type.Optional(Type.String()),
});

/** Described in the document only: the body is prom-client's text, not JSON. */
const metricsResponse = {
  200: {
    description: 'Prometheus text exposition format (prom-client); see docs/operations.md.',
    content: { 'text/plain': { schema: { type: 'string' } } },
  },
};

const openApiResponse = {
  200: {
    description: 'OpenAPI 3.1 document (also kept in docs/openapi.json).',
    type: 'object',
    additionalProperties: true,
  },
};

export const healthRoutes: RoutePlugin<{ control: HealthControl; version: string }> = (
  app,
  { control, version },
) => {
  app.get(
    '/healthz',
    { schema: { summary: 'Liveness: the process answers', response: { 200: HealthSchema } } },
    () => ({ status: 'ok' as const, version }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: caches synced, chain answered, queue running (503 otherwise)',
        response: { 200: ReadinessSchema, 503: ReadinessSchema },
      },
    },
    (_request, reply) => {
      const readiness = control.readiness();
      void reply.status(readiness.ready ? 200 : 503);
      return readiness;
    },
  );

  app.get(
    '/metrics',
    {
      schema: { summary: 'Prometheus metrics (text exposition format)', response: metricsResponse },
    },
    async (_request, reply) => {
      const { contentType, body } = await control.metrics();
      void reply.type(contentType);
      return body;
    },
  );

  app.get(
    '/openapi.json',
    { schema: { summary: 'This API as an OpenAPI 3.1 document', response: openApiResponse } },
    () => app.swagger(),
  );
  return Promise.resolve();
};

// Requests a web page can make a browser send are refused on every state-changing route: a page on
// any site may POST to the control RPC (a port-forward puts it on localhost) with a `text/plain`
// or form body and no preflight. The bearer token already stops those, since a page cannot add
// `Authorization` to a request without a preflight this server never grants; this hook refuses
// them by their look too, before the token is even read, so a route added later without the
// token or with a body parser of its own is covered the same way. Our clients (the CLI, the
// harness, the localnet's command line, the departure hook) send no `Origin`, no
// `Sec-Fetch-Site`, and JSON.
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ManagerError } from '../errors.ts';
import { errorRef } from './schemas.ts';

/** Methods that change nothing: no check. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Throws CROSS_ORIGIN for a browser's request and BAD_REQUEST for a body that is not JSON. */
export function refuseBrowserRequest(request: Pick<FastifyRequest, 'method' | 'headers'>): void {
  if (SAFE_METHODS.has(request.method)) return;
  const { headers } = request;
  const site = headers['sec-fetch-site'];
  if (headers.origin !== undefined || (site !== undefined && site !== 'none')) {
    throw new ManagerError(
      'CROSS_ORIGIN',
      'requests from a web page (Origin or Sec-Fetch-Site) may not change anything',
    );
  }
  const type = headers['content-type'];
  const media = (type ?? '').split(';', 1).join('').trim().toLowerCase();
  const hasBody =
    headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
  if ((type !== undefined || hasBody) && media !== 'application/json') {
    throw new ManagerError('BAD_REQUEST', 'unsupported content type; send application/json');
  }
}

/**
 * The hook for every route of the server (not encapsulated: fastify-plugin), run first; each
 * state-changing route's document gets its 403 answer.
 */
export const browserGuard = fp(
  (app) => {
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (methods.every((method) => SAFE_METHODS.has(method))) return;
      const schema = route.schema ?? {};
      route.schema = {
        ...schema,
        response: { ...(schema.response as object | undefined), 403: errorRef },
      };
    });
    app.addHook('onRequest', (request) => {
      refuseBrowserRequest(request);
      return Promise.resolve();
    });
    return Promise.resolve();
  },
  { name: 'browser-guard', fastify: '5.x' },
);

// The bearer token of the /v1 routes: `checkBearer` compares in constant time over equal-length
// digests; `bearerAuth` is the plugin that guards every route registered beside it.
import { createHash, timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';
import { ManagerError } from '../errors.ts';
import { errorRef } from './schemas.ts';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** Throws UNAUTHORIZED unless `header` is `Bearer <token>` with the configured token. */
export function checkBearer(header: string | undefined, token: string | undefined): void {
  if (token === undefined) {
    throw new ManagerError(
      'UNAUTHORIZED',
      'the /v1 routes are disabled: the manager has no CM_RPC_TOKEN (or CM_RPC_TOKEN_FILE)',
    );
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (match?.[1] === undefined || !timingSafeEqual(digest(match[1]), digest(token))) {
    throw new ManagerError(
      'UNAUTHORIZED',
      'a valid "Authorization: Bearer <token>" header is required',
    );
  }
}

/**
 * Guards the routes of the scope it is registered in (it is not encapsulated: fastify-plugin):
 * each route's document gets the bearer requirement and its 401 answer, and each request is
 * checked on `onRequest`, before its body is read or validated — without the token nothing
 * else is looked at.
 */
export const bearerAuth = fp<{ token: string | undefined }>(
  (app, options) => {
    app.addHook('onRoute', (route) => {
      const schema = route.schema ?? {};
      route.schema = {
        ...schema,
        security: [{ bearer: [] }],
        response: { ...(schema.response as object | undefined), 401: errorRef },
      };
    });
    app.addHook('onRequest', (request) => {
      checkBearer(request.headers.authorization, options.token);
      return Promise.resolve();
    });
    return Promise.resolve();
  },
  { name: 'bearer-auth', fastify: '5.x' },
);

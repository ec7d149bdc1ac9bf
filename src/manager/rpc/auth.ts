// Bearer-token check for mutating routes, in constant time over equal-length digests.
import { createHash, timingSafeEqual } from 'node:crypto';
import { ManagerError } from '../errors.ts';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** Throws UNAUTHORIZED unless `header` is `Bearer <token>` with the configured token. */
export function checkBearer(header: string | undefined, token: string | undefined): void {
  if (token === undefined) {
    throw new ManagerError(
      'UNAUTHORIZED',
      'mutations are disabled: the manager has no CM_RPC_TOKEN (or CM_RPC_TOKEN_FILE)',
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

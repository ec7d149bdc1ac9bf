// The /_emulator/ routes refuse what a web page can make a browser send (issue 30: the same rule
// for every state-changing route of every server we ship; src/localnet/http-router.ts
// refuseBrowserRequest for the node's routes, src/manager/rpc/browser-guard.ts for the manager's
// RPC). A page on any site may POST to the emulator on localhost without a preflight when the
// body is `text/plain`, a form or absent, and may GET any address (an <img>); with no admin token
// configured the anonymous caller is the admin, so such a request would arm faults, kill pods or
// mint tokens. Our clients (the harness, the tests) send no Origin, no Sec-Fetch-Site, and JSON.
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError, methodNotAllowed, unsupportedMediaType } from '../status-errors.ts';

/** The control routes that only read: the only ones a GET may reach. */
export const READ_ONLY_CONTROL = new Set(['requests', 'kubelet/log-path']);

/** Throws 403 for a browser's request, 415 for a body not JSON, 405 for a GET that would act. */
export function guardControl(route: string, method: string, headers: IncomingHttpHeaders): void {
  if (method === 'GET' || method === 'HEAD') {
    if (!READ_ONLY_CONTROL.has(route)) throw methodNotAllowed();
    return;
  }
  const site = headers['sec-fetch-site'];
  if (headers.origin !== undefined || (site !== undefined && site !== 'none')) {
    throw new ApiError({
      code: 403,
      reason: 'Forbidden',
      message: 'requests from a web page (Origin or Sec-Fetch-Site) may not change anything',
      details: {},
    });
  }
  const type = headers['content-type'];
  const media = (type ?? '').split(';', 1).join('').trim().toLowerCase();
  const hasBody =
    headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
  if ((type !== undefined || hasBody) && media !== 'application/json')
    throw unsupportedMediaType(media, ['application/json']);
}

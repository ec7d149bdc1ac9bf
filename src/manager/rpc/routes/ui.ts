// GET /ui/: the participation page (src/manager/ui/), static files shipped in the package and
// served by the manager itself — no CDN, no build step. The page loads without a token; its data
// calls (/v1/participation, /v1/validators, /v1/events) send the one it was given in the URL's
// fragment (`/ui/#token=…`, never sent to a server), kept in the tab's sessionStorage. A token in
// the query string is refused: a query string reaches servers' logs and the browser's history.
// The Content-Security-Policy lets the page load only its own files and talk only to this server.
import { readFile } from 'node:fs/promises';
import type { FastifyReply } from 'fastify';
import type { RoutePlugin } from '../route-plugin.ts';

/** The page's folder (beside the sources in the package and the image; the bundles name it too). */
export const UI_DIR = new URL('../../ui/', import.meta.url);

/** The files served, by name, with their type. Nothing else under /ui/ is. */
export const UI_FILES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'grid.js': 'text/javascript; charset=utf-8',
  'tiles.js': 'text/javascript; charset=utf-8',
  'cells.js': 'text/javascript; charset=utf-8',
  'stream.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
};

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
};

const TOKEN_PARAMETERS = ['token', 'access_token', 'bearer'];

const hidden = { schema: { hide: true } };

export const uiRoutes: RoutePlugin<object> = (app) => {
  // Read at each request (a few KiB): an edited page shows on reload, with no restart.
  const send = async (reply: FastifyReply, name: string, query: unknown): Promise<FastifyReply> => {
    const named = TOKEN_PARAMETERS.find((p) => p in (query as Record<string, unknown>));
    void reply.headers(SECURITY_HEADERS);
    if (named !== undefined)
      return reply
        .code(400)
        .type('text/plain; charset=utf-8')
        .send(
          `A token in the query string ("?${named}=") is refused: URLs with a query reach logs and history. Open /ui/#token=<token> (the part after # never leaves the browser).\n`,
        );
    const body = await readFile(new URL(name, UI_DIR)).catch(() => undefined);
    if (body === undefined)
      return reply
        .code(404)
        .type('text/plain; charset=utf-8')
        .send(`${name} is not in this package (src/manager/ui/)\n`);
    return reply.type(UI_FILES[name] ?? 'application/octet-stream').send(body);
  };
  app.get('/ui', hidden, (_request, reply) => reply.redirect('/ui/', 301));
  app.get('/ui/', hidden, (request, reply) => send(reply, 'index.html', request.query));
  for (const name of Object.keys(UI_FILES))
    app.get(`/ui/${name}`, hidden, (request, reply) => send(reply, name, request.query));
  return Promise.resolve();
};

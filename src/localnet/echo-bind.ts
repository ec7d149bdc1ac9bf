// What Echo v4.9.1's `DefaultBinder.BindBody` (bind.go:59-97, V1's RPC server) does with a POST
// body before the JSON decoder: by the raw `Content-Type`, a case-sensitive prefix. JSON is
// decoded; a form (`application/x-www-form-urlencoded`, `multipart/form-data`) is parsed and binds
// only fields with a `form` tag (bind.go:126-179) — V1's request structs have none, so it binds
// nothing and the handler runs on zero values; anything else is `ErrUnsupportedMediaType`, which
// V1's handlers answer 400 `bad request`. XML (`application/xml`, `text/xml`) is decoded by Go's
// `encoding/xml` into the struct; the stand-in does not copy that and refuses it.
import type { IncomingHttpHeaders } from 'node:http';

export type EchoBody = 'json' | 'zero' | 'refused';

export function echoBodyKind(request: { headers: IncomingHttpHeaders; body: Buffer }): EchoBody {
  // `req.ContentLength == 0`: nothing to bind, zero values.
  if (request.body.length === 0) return 'zero';
  const type = request.headers['content-type'] ?? '';
  if (type.startsWith('application/json')) return 'json';
  if (type.startsWith('application/x-www-form-urlencoded')) {
    return formParses(request.body.toString('latin1')) ? 'zero' : 'refused';
  }
  if (type.startsWith('multipart/form-data')) {
    return multipartParses(type, request.body.toString('latin1')) ? 'zero' : 'refused';
  }
  return 'refused';
}

/**
 * Go's `url.ParseQuery` on the body (`Request.ParseForm`): every `%` starts a two-digit hex
 * escape, and a `;` is an error since Go 1.17.
 */
function formParses(body: string): boolean {
  return !body.includes(';') && !/%(?![0-9a-fA-F]{2})/.test(body);
}

/**
 * `Request.ParseMultipartForm`: a `boundary` parameter, and a body that starts with its first
 * delimiter and holds the closing one (`mime/multipart`); anything else fails the bind.
 */
function multipartParses(type: string, body: string): boolean {
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(type);
  const value = boundary?.[1] ?? boundary?.[2];
  if (value === undefined) return false;
  return body.startsWith(`--${value}`) && body.includes(`--${value}--`);
}

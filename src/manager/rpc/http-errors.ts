// Errors the HTTP layer raises before any route runs — a malformed request line or header, a
// header block too large, a URL that does not decode — answered in the control RPC's error shape
// (`{"error":{"code","message"}}`) instead of fastify's and Node's defaults, with fixed texts: the
// caller's input is never echoed back.
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

interface ConnectionError extends Error {
  code?: string;
}

/** fastify's `clientErrorHandler`: the request never reached the router (Node's HTTP parser failed). */
export function answerClientError(error: ConnectionError, socket: Socket): void {
  // A connection reset leaves nothing to answer (https://nodejs.org/api/http.html#event-clienterror).
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, text, body] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'Request Header Fields Too Large',
          errorBody('HEADERS_TOO_LARGE', 'the request headers are too large'),
        ]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', errorBody('BAD_REQUEST', 'the request did not arrive in time')]
        : [400, 'Bad Request', errorBody('BAD_REQUEST', 'malformed HTTP request')];
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy();
}

/** fastify's `frameworkErrors`: a URL that does not decode (FST_ERR_BAD_URL) and the like. */
export function answerFrameworkError(
  error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): void {
  const message = error.code === 'FST_ERR_BAD_URL' ? 'the URL is not valid' : 'bad request';
  void reply
    .status(400)
    .type('application/json; charset=utf-8')
    .send(errorBody('BAD_REQUEST', message));
}

function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

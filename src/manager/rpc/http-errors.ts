// Every error answer of the control RPC has one shape, `{"error":{"code","message"[,"details"]}}`,
// with fixed texts: the caller's input is never echoed back, and an unexpected error's message
// (it may carry CLI output or input) stays in the log behind a generic 500. This file holds the
// handlers fastify calls: for errors of a route (`answerError`), for unknown routes
// (`answerNotFound`), and for requests that never reached the router (`answerClientError`,
// `answerFrameworkError`: a malformed request line or header, a header block too large, a URL
// that does not decode) instead of fastify's and Node's defaults.
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ManagerError } from '../errors.ts';

/** The largest request body the control RPC reads (its bodies are a few fields). */
export const BODY_LIMIT = 4096;

interface ConnectionError extends Error {
  code?: string;
}

/** fastify's error handler: a catalogue error as its status, fastify's 4xx as 400, else 500. */
export function answerError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  if (error instanceof ManagerError) {
    // A 503 is the manager busy or not ready yet (TOO_MANY_STREAMS, NOT_LEADER…): worth a
    // warning, not an error of the manager.
    if (error.status === 503) request.log.warn({ code: error.code, err: error }, 'request failed');
    else if (error.status >= 500)
      request.log.error({ code: error.code, err: error }, 'request failed');
    else request.log.info({ code: error.code }, 'request refused');
    return reply.status(error.status).send({
      error: {
        code: error.code,
        message: error.message,
        ...(error.details ? { details: error.details } : {}),
      },
    });
  }
  // An oversized body is 413 (RFC 9110 §15.5.14), as the node RPC answers it, not a bad request.
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return reply
      .status(413)
      .send({ error: { code: 'BODY_TOO_LARGE', message: badRequest(error) } });
  if (
    error.validation !== undefined ||
    (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
  ) {
    return reply.status(400).send({ error: { code: 'BAD_REQUEST', message: badRequest(error) } });
  }
  request.log.error({ err: error }, 'unexpected error');
  return reply
    .status(500)
    .send({ error: { code: 'INTERNAL', message: 'internal error; see the manager log' } });
}

/** fastify's not-found handler: the route named, its query left out (it may carry secrets). */
export function answerNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.status(404).send({
    error: {
      code: 'NOT_FOUND',
      message: `no route ${request.method} ${(request.url.split('?')[0] ?? '').slice(0, 200)}`,
    },
  });
}

/** Messages for 4xx errors fastify raises: fixed texts, never the caller's input echoed. */
function badRequest(error: FastifyError): string {
  if (error.validation !== undefined) return `invalid request: ${error.message}`;
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `request body too large (limit ${BODY_LIMIT} bytes)`;
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'unsupported content type; send application/json';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'the body is empty; send a JSON object';
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'the body is not valid JSON';
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'the body does not match its Content-Length';
    default:
      return error instanceof SyntaxError ? 'the body is not valid JSON' : 'bad request';
  }
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

// Request bodies: read with the apiserver's 3 MiB limit (413 RequestEntityTooLarge,
// handlers/rest.go limitedReadBody; server/config.go MaxRequestBodyBytes = 3*1024*1024), and
// decoded by their Content-Type: JSON, YAML or protobuf (`k8s\0` + runtime.Unknown).
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import type { Encoding } from './content-negotiation.ts';
import { decodeObject } from '../protobuf/envelope.ts';
import { ApiError, badRequest } from '../status-errors.ts';

/** The apiserver's default --max-request-body-bytes. */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

export function tooLarge(limit: number): ApiError {
  return new ApiError({
    code: 413,
    reason: 'RequestEntityTooLarge',
    message: `Request entity too large: limit is ${limit}`,
  });
}

/**
 * The request body, at most `limit` bytes. Past the limit it stops reading and throws 413; the
 * caller answers and the connection is closed, so the rest is never buffered.
 */
export async function readBody(
  request: IncomingMessage,
  limit = MAX_REQUEST_BODY_BYTES,
): Promise<Buffer> {
  const declared = Number(request.headers['content-length'] ?? '0');
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

function decodeFailure(error: unknown): ApiError {
  return badRequest(
    `the body of the request could not be decoded: ${error instanceof Error ? error.message : 'invalid'}`,
  );
}

/** A body as JSON value: JSON, YAML (`application/yaml`, apply patches) or protobuf. */
export function decodeBody(body: Buffer, encoding: Encoding): unknown {
  if (encoding === 'protobuf') {
    try {
      return decodeObject(body);
    } catch (error: unknown) {
      throw decodeFailure(error);
    }
  }
  const text = body.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return encoding === 'yaml' ? (parseYaml(text) as unknown) : (JSON.parse(text) as unknown);
  } catch (error: unknown) {
    throw decodeFailure(error);
  }
}

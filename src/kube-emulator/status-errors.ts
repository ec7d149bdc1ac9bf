// Kubernetes `Status` failures: the reasons, codes and messages a real apiserver answers with.
import type { JsonObject } from './json.ts';

/** What a `Status` names as the object a failure is about. */
export interface StatusTarget {
  /** The resource's group ('' for core). */
  group: string;
  /** The resource plural (`pods`), as `details.kind` carries it for most reasons. */
  resource: string;
  name?: string;
}

export interface StatusCause {
  reason: string;
  field: string;
  message: string;
}

/** A failure that the HTTP layer turns into a `Status` body with `code` as the HTTP status. */
export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: JsonObject | undefined;
  /** Extra response headers (for instance `Retry-After`). */
  readonly headers: Record<string, string>;

  constructor(options: {
    code: number;
    reason: string;
    message: string;
    details?: JsonObject;
    headers?: Record<string, string>;
  }) {
    super(options.message);
    this.name = 'ApiError';
    this.code = options.code;
    this.reason = options.reason;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  toStatus(): JsonObject {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      ...(this.reason === '' ? {} : { reason: this.reason }),
      ...(this.details === undefined ? {} : { details: this.details }),
      code: this.code,
    };
  }
}

/** `statefulsets.apps` or `pods`: how messages name a resource. */
export function qualifiedResource(target: StatusTarget): string {
  return target.group === '' ? target.resource : `${target.resource}.${target.group}`;
}

function details(target: StatusTarget): JsonObject {
  return {
    ...(target.name === undefined ? {} : { name: target.name }),
    ...(target.group === '' ? {} : { group: target.group }),
    kind: target.resource,
  };
}

export function notFound(target: StatusTarget): ApiError {
  return new ApiError({
    code: 404,
    reason: 'NotFound',
    message: `${qualifiedResource(target)} "${target.name ?? ''}" not found`,
    details: details(target),
  });
}

export function alreadyExists(target: StatusTarget): ApiError {
  return new ApiError({
    code: 409,
    reason: 'AlreadyExists',
    message: `${qualifiedResource(target)} "${target.name ?? ''}" already exists`,
    details: details(target),
  });
}

export function conflict(target: StatusTarget, why?: string): ApiError {
  const reason =
    why ??
    'the object has been modified; please apply your changes to the latest version and try again';
  return new ApiError({
    code: 409,
    reason: 'Conflict',
    message: `Operation cannot be fulfilled on ${qualifiedResource(target)} "${target.name ?? ''}": ${reason}`,
    details: details(target),
  });
}

/** 422 Invalid; `kind` is the object's Kind (`StatefulSet`), as the real message uses it. */
export function invalid(
  target: StatusTarget & { kind: string },
  causes: readonly StatusCause[],
): ApiError {
  // errs.ToAggregate(): one message as it is, several deduplicated in brackets.
  const messages = [...new Set(causes.map((cause) => `${cause.field}: ${cause.message}`))];
  const summary = messages.length === 1 ? (messages[0] ?? '') : `[${messages.join(', ')}]`;
  const qualifiedKind = target.group === '' ? target.kind : `${target.kind}.${target.group}`;
  return new ApiError({
    code: 422,
    reason: 'Invalid',
    message:
      messages.length === 0
        ? `${qualifiedKind} "${target.name ?? ''}" is invalid`
        : `${qualifiedKind} "${target.name ?? ''}" is invalid: ${summary}`,
    details: {
      ...(target.name === undefined || target.name === '' ? {} : { name: target.name }),
      ...(target.group === '' ? {} : { group: target.group }),
      kind: target.kind,
      causes: causes.map((cause) => ({ ...cause })),
    },
  });
}

export function badRequest(message: string): ApiError {
  return new ApiError({ code: 400, reason: 'BadRequest', message });
}

export function methodNotAllowed(
  message = 'the server does not allow this method on the requested resource',
): ApiError {
  return new ApiError({ code: 405, reason: 'MethodNotAllowed', message, details: {} });
}

export function unsupportedMediaType(contentType: string, accepted: readonly string[]): ApiError {
  return new ApiError({
    code: 415,
    reason: 'UnsupportedMediaType',
    message: `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    details: { causes: [{ reason: 'UnexpectedServerResponse', message: contentType }] },
  });
}

export function routeNotFound(path: string): ApiError {
  return new ApiError({
    code: 404,
    reason: 'NotFound',
    message: `the server could not find the requested resource (${path})`,
    details: {},
  });
}

export function expired(message: string): ApiError {
  return new ApiError({ code: 410, reason: 'Expired', message });
}

export function unauthorized(): ApiError {
  return new ApiError({ code: 401, reason: 'Unauthorized', message: 'Unauthorized' });
}

/**
 * RBAC's refusal (apiserver pkg/endpoints/handlers/responsewriters/errors.go,
 * ForbiddenStatusError and forbiddenMessage): the message names `resource/subresource`, the
 * Status details only the resource.
 */
export function forbidden(options: {
  user: string;
  verb: string;
  target: StatusTarget;
  namespace: string;
  subresource?: string | undefined;
}): ApiError {
  const { user, verb, target, namespace, subresource } = options;
  const where = namespace === '' ? 'at the cluster scope' : `in the namespace "${namespace}"`;
  const what = target.name === undefined ? '' : ` "${target.name}"`;
  const resource =
    subresource === undefined || subresource === ''
      ? target.resource
      : `${target.resource}/${subresource}`;
  return new ApiError({
    code: 403,
    reason: 'Forbidden',
    message: `${qualifiedResource(target)}${what} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "${target.group}" ${where}`,
    details: details(target),
  });
}

export function internalError(message: string): ApiError {
  return new ApiError({
    code: 500,
    reason: 'InternalError',
    message: `Internal error occurred: ${message}`,
    details: { causes: [{ message }] },
  });
}

export function tooManyRequests(): ApiError {
  return new ApiError({
    code: 429,
    reason: 'TooManyRequests',
    message: 'the server has received too many requests and has asked us to try again later',
    details: { retryAfterSeconds: 1 },
    headers: { 'Retry-After': '1' },
  });
}

// Unknown fields, as the apiserver's strict decoding finds them (sigs.k8s.io/json
// UnmarshalStrict: `unknown field "spec.template.spec.containers[0].imagePullPolcy"`), checked
// against the OpenAPI definitions of the kind. Unknown fields are always dropped (the apiserver
// decodes into Go structs); `fieldValidation` (default Warn, handlers/rest.go fieldValidation)
// decides whether they are an error (Strict: 400 on create and update, handlers/create.go; 422
// on patches, handlers/patch.go:350), a `Warning` header (Warn) or nothing (Ignore).
import { isObject, type JsonObject } from '../json.ts';
import type { KindInfo } from '../kinds.ts';
import { definitionOf, definitions } from '../openapi/openapi-schemas.ts';
import { ApiError, badRequest } from '../status-errors.ts';

/** The `fieldValidation` directive of a write. */
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

function resolve(schema: JsonObject): JsonObject {
  let current = schema;
  for (let depth = 0; depth < 8; depth++) {
    const ref =
      typeof current.$ref === 'string'
        ? current.$ref
        : Array.isArray(current.allOf) &&
            isObject(current.allOf[0]) &&
            typeof current.allOf[0].$ref === 'string'
          ? current.allOf[0].$ref
          : undefined;
    if (ref === undefined) return current;
    const next = definitions()[ref.replace('#/definitions/', '')];
    if (next === undefined) return {};
    current = next;
  }
  return current;
}

function walk(value: unknown, schema: JsonObject, path: string, found: string[]): void {
  const resolved = resolve(schema);
  if (Array.isArray(value)) {
    if (isObject(resolved.items)) {
      const items = resolved.items;
      value.forEach((item, index) => walk(item, items, `${path}[${index}]`, found));
    }
    return;
  }
  if (!isObject(value) || resolved.type !== 'object') return;
  const properties = isObject(resolved.properties) ? resolved.properties : undefined;
  const additional = isObject(resolved.additionalProperties)
    ? resolved.additionalProperties
    : undefined;
  if (properties === undefined) {
    if (additional !== undefined)
      for (const [key, item] of Object.entries(value))
        walk(item, additional, `${path}${path === '' ? '' : '.'}${key}`, found);
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    const child = `${path}${path === '' ? '' : '.'}${key}`;
    const property = properties[key];
    if (!isObject(property)) {
      found.push(child);
      Reflect.deleteProperty(value, key);
      continue;
    }
    walk(item, property, child, found);
  }
}

/**
 * Removes the fields `object` has that `info`'s schema does not know, in place, and returns
 * their paths (`metadata.lables`). Kinds without a definition are left alone.
 */
export function pruneUnknownFields(info: KindInfo, object: JsonObject): string[] {
  const definition = definitions()[definitionOf(info.group, info.version, info.kind)];
  if (definition === undefined) return [];
  const found: string[] = [];
  walk(object, definition, '', found);
  return found;
}

const unknown = (path: string): string => `unknown field ${JSON.stringify(path)}`;

/** `Warning` header values for unknown fields under Warn (`299 - "unknown field \"x\""`). */
export function unknownFieldWarnings(paths: readonly string[]): string[] {
  return paths.map((path) => `299 - ${JSON.stringify(unknown(path))}`);
}

/**
 * Applies the directive to the unknown fields of a create or update body: Strict → 400
 * `strict decoding error: …`; Warn → warnings; Ignore → none.
 */
export function checkBodyFields(
  directive: FieldValidation | '',
  paths: readonly string[],
): string[] {
  if (paths.length === 0 || directive === 'Ignore') return [];
  if (directive === 'Strict')
    throw badRequest(`strict decoding error: ${paths.map(unknown).join(', ')}`);
  return unknownFieldWarnings(paths);
}

/** The same for a patch (handlers/patch.go:350: 422 Invalid on field `patch`). */
export function checkPatchedFields(
  directive: FieldValidation | '',
  paths: readonly string[],
  patched: JsonObject,
): string[] {
  if (paths.length === 0 || directive === 'Ignore') return [];
  if (directive !== 'Strict') return unknownFieldWarnings(paths);
  const detail = `strict decoding error: ${paths.map(unknown).join(', ')}`;
  const value = JSON.stringify(JSON.stringify(patched));
  throw new ApiError({
    code: 422,
    reason: 'Invalid',
    message: ` "" is invalid: patch: Invalid value: ${value}: ${detail}`,
    details: {
      causes: [
        {
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${value}: ${detail}`,
          field: 'patch',
        },
      ],
    },
  });
}

/**
 * Server-side apply converts the patch to a typed object first; a field the schema does not
 * declare fails that conversion, whatever fieldValidation says, with a plain error the
 * apiserver answers as 500 (managedfields/internal/structuredmerge.go:147).
 */
export function applyUnknownFieldError(
  info: KindInfo,
  namespace: string,
  name: string,
  paths: readonly string[],
): ApiError {
  const gvk = `${info.group}/${info.version}, Kind=${info.kind}`;
  return new ApiError({
    code: 500,
    reason: '',
    message: `failed to create typed patch object (${namespace}/${name}; ${gvk}): ${paths.map((path) => `.${path}: field not declared in schema`).join(', ')}`,
  });
}

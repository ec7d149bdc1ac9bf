// RFC 6902 JSON Patch (`application/json-patch+json`), applied to a copy of the document.
import { clone, deepEqual, isObject } from '../json.ts';
import { ApiError, badRequest } from '../status-errors.ts';

function patchFailed(message: string): ApiError {
  return new ApiError({ code: 422, reason: 'Invalid', message, details: {} });
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw patchFailed(`invalid JSON pointer: ${pointer}`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

type Container = Record<string, unknown> | unknown[];

/** The parent container of the pointer's last token, and that token. */
function locate(document: unknown, pointer: string): { parent: Container; token: string } {
  const tokens = parsePointer(pointer);
  const token = tokens.pop();
  if (token === undefined) throw patchFailed('the root cannot be the target of this operation');
  let current = document;
  for (const step of tokens) {
    if (Array.isArray(current)) current = current[Number(step)];
    else if (isObject(current)) current = current[step];
    else current = undefined;
    if (current === undefined) throw patchFailed(`doc is missing path: ${pointer}`);
  }
  if (!Array.isArray(current) && !isObject(current)) {
    throw patchFailed(`doc is missing path: ${pointer}`);
  }
  return { parent: current, token };
}

function arrayIndex(list: unknown[], token: string, forInsert: boolean): number {
  if (forInsert && token === '-') return list.length;
  if (!/^(0|[1-9]\d*)$/.test(token)) throw patchFailed(`invalid array index: ${token}`);
  const index = Number(token);
  if (index > list.length || (!forInsert && index === list.length)) {
    throw patchFailed(`array index out of bounds: ${token}`);
  }
  return index;
}

function read(document: unknown, pointer: string): unknown {
  if (pointer === '') return document;
  const { parent, token } = locate(document, pointer);
  const value = Array.isArray(parent) ? parent[arrayIndex(parent, token, false)] : parent[token];
  if (value === undefined) throw patchFailed(`doc is missing path: ${pointer}`);
  return value;
}

function add(document: unknown, pointer: string, value: unknown): unknown {
  if (pointer === '') return value;
  const { parent, token } = locate(document, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, token, true), 0, value);
  else parent[token] = value;
  return document;
}

function remove(document: unknown, pointer: string): unknown {
  const { parent, token } = locate(document, pointer);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, token, false), 1);
  else {
    if (!Object.hasOwn(parent, token)) throw patchFailed(`doc is missing path: ${pointer}`);
    Reflect.deleteProperty(parent, token);
  }
  return document;
}

/**
 * Applies a JSON Patch. The body must be an array of operations: an object body (the mistake
 * client-node makes by default) is rejected with 400, as a real apiserver rejects it.
 */
export function applyJsonPatch(document: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) {
    throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  }
  let result = clone(document);
  for (const operation of patch) {
    if (!isObject(operation) || typeof operation.op !== 'string') {
      throw badRequest('json: cannot unmarshal into Go value of type jsonpatch.Operation');
    }
    const path = typeof operation.path === 'string' ? operation.path : undefined;
    if (path === undefined) throw patchFailed(`operation ${operation.op} has no path`);
    const from = typeof operation.from === 'string' ? operation.from : undefined;
    switch (operation.op) {
      case 'add':
        result = add(result, path, clone(operation.value));
        break;
      case 'remove':
        result = remove(result, path);
        break;
      case 'replace':
        read(result, path);
        result = add(remove(result, path), path, clone(operation.value));
        break;
      case 'move': {
        if (from === undefined) throw patchFailed('move operation has no from');
        const value = read(result, from);
        result = add(remove(result, from), path, value);
        break;
      }
      case 'copy': {
        if (from === undefined) throw patchFailed('copy operation has no from');
        result = add(result, path, clone(read(result, from)));
        break;
      }
      case 'test':
        if (!deepEqual(read(result, path), operation.value)) {
          throw patchFailed(`testing value ${path} failed: test failed`);
        }
        break;
      default:
        throw patchFailed(`unexpected kind: ${operation.op}`);
    }
  }
  return result;
}

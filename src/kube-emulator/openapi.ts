// A minimal OpenAPI v3 stub: a root listing each group version, and per group version the
// PATCH operations with the `fieldValidation` parameter, so kubectl's default
// `--validate=strict` leaves validation to the server instead of downloading schemas.
import type { JsonObject } from './json.ts';
import { kinds } from './kinds.ts';

function groupVersionPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

const HASH = 'kube-emulator-1';

function root(): JsonObject {
  const paths: JsonObject = {};
  for (const info of kinds) {
    const path = groupVersionPath(info.group, info.version);
    paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${HASH}` };
  }
  return { paths };
}

function groupVersionDocument(path: string): JsonObject | undefined {
  const served = kinds.filter((info) => groupVersionPath(info.group, info.version) === path);
  if (served.length === 0) return undefined;
  const paths: JsonObject = {};
  for (const info of served) {
    const prefix = `/${path}${info.namespaced ? '/namespaces/{namespace}' : ''}/${info.resource}/{name}`;
    paths[prefix] = {
      patch: {
        operationId: `patch${info.kind}`,
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': {
          group: info.group,
          version: info.version,
          kind: info.kind,
        },
        parameters: ['dryRun', 'fieldManager', 'fieldValidation', 'force'].map((name) => ({
          name,
          in: 'query',
          schema: { type: name === 'force' ? 'boolean' : 'string', uniqueItems: true },
        })),
        responses: { '200': { description: 'OK' } },
      },
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.4-kube-emulator' },
    paths,
    components: { schemas: {} },
  };
}

/** The OpenAPI document at `path`, or undefined (404) for the paths not served (v2 included). */
export function openApiDocument(path: string): JsonObject | undefined {
  if (path === '/openapi/v3') return root();
  const match = /^\/openapi\/v3\/(.+)$/.exec(path);
  return match?.[1] === undefined ? undefined : groupVersionDocument(match[1]);
}

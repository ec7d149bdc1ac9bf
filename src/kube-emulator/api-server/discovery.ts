// Legacy discovery documents (/api, /apis, per-group APIResourceList) and /version.
import type { JsonObject } from '../json.ts';
import { kinds, type KindInfo } from '../kinds.ts';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** The version this emulator claims: kubectl's dispatcher picks kubectl.1.32 from it. */
export const serverVersion = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.4-kube-emulator',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2025-04-22T00:00:00Z',
  goVersion: 'go1.23.6',
  compiler: 'gc',
  platform: 'linux/amd64',
} as const;

function groups(): Map<string, string[]> {
  const byGroup = new Map<string, string[]>();
  for (const info of kinds) {
    if (info.group === '') continue;
    const versions = byGroup.get(info.group) ?? [];
    if (!versions.includes(info.version)) versions.push(info.version);
    byGroup.set(info.group, versions);
  }
  return byGroup;
}

export function apiVersions(serverAddress: string): JsonObject {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupDocument(name: string, versions: readonly string[]): JsonObject {
  const list = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
  return { name, versions: list, preferredVersion: list[0] };
}

export function apiGroupList(): JsonObject {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...groups()].map(([name, versions]) => groupDocument(name, versions)),
  };
}

/** The APIGroup document at /apis/<group>, or undefined for a group not served. */
export function apiGroup(name: string): JsonObject | undefined {
  const versions = groups().get(name);
  return versions === undefined
    ? undefined
    : { kind: 'APIGroup', apiVersion: 'v1', ...groupDocument(name, versions) };
}

function resourceRows(info: KindInfo): JsonObject[] {
  const rows: JsonObject[] = [
    {
      name: info.resource,
      singularName: info.singular,
      namespaced: info.namespaced,
      kind: info.kind,
      verbs: info.verbs ?? VERBS,
      ...(info.shortNames.length > 0 ? { shortNames: info.shortNames } : {}),
      ...(info.categories.length > 0 ? { categories: info.categories } : {}),
    },
  ];
  for (const sub of info.subresources) {
    rows.push(
      sub === 'scale'
        ? {
            name: `${info.resource}/scale`,
            singularName: '',
            namespaced: info.namespaced,
            group: 'autoscaling',
            version: 'v1',
            kind: 'Scale',
            verbs: ['get', 'patch', 'update'],
          }
        : {
            name: `${info.resource}/${sub}`,
            singularName: '',
            namespaced: info.namespaced,
            kind: info.kind,
            verbs: ['get', 'patch', 'update'],
          },
    );
  }
  for (const extra of info.extraSubresources ?? []) {
    rows.push({
      name: `${info.resource}/${extra.name}`,
      singularName: '',
      namespaced: info.namespaced,
      ...(extra.group === undefined ? {} : { group: extra.group, version: extra.version }),
      kind: extra.kind,
      verbs: extra.verbs,
    });
  }
  return rows;
}

/** The APIResourceList of a group version ('' group for /api/v1), or undefined. */
export function apiResourceList(group: string, version: string): JsonObject | undefined {
  const served = kinds.filter((info) => info.group === group && info.version === version);
  if (served.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group === '' ? version : `${group}/${version}`,
    resources: served.flatMap(resourceRows),
  };
}

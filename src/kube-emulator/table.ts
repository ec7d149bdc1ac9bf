// Server-side printing (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`): the columns
// `kubectl get` shows for pods, StatefulSets, Deployments, namespaces and events; NAME and AGE
// for the rest.
import { isObject, objects, type JsonObject } from './json.ts';
import type { KindInfo } from './kinds.ts';
import type { KubeObject } from './types.ts';

interface Column {
  name: string;
  type: 'string' | 'integer';
  format?: 'name';
  priority?: number;
  cell: (object: KubeObject, now: number) => string | number;
}

/** Whether a request's Accept header asks for a Table. */
export function wantsTable(accept: string | undefined): boolean {
  return accept?.split(',')[0]?.includes('as=Table') === true && accept.includes('g=meta.k8s.io');
}

/** Kubernetes' HumanDuration, as `kubectl get` shows an AGE. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 192)
    return hours % 24 === 0
      ? `${Math.floor(hours / 24)}d`
      : `${Math.floor(hours / 24)}d${hours % 24}h`;
  return `${Math.floor(hours / 24)}d`;
}

const name: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  cell: (o) => o.metadata.name ?? '',
};
const age: Column = {
  name: 'Age',
  type: 'string',
  cell: (o, now) => {
    const created = Date.parse(o.metadata.creationTimestamp ?? '');
    return Number.isNaN(created) ? '<unknown>' : humanDuration(now - created);
  },
};

const section = (o: KubeObject, key: string): JsonObject => (isObject(o[key]) ? o[key] : {});
const count = (value: unknown): number => (typeof value === 'number' ? value : 0);
const text = (value: unknown, fallback: string): string =>
  typeof value === 'string' && value !== '' ? value : fallback;

function podStatusText(pod: KubeObject): string {
  if (pod.metadata.deletionTimestamp !== undefined) return 'Terminating';
  const status = section(pod, 'status');
  for (const container of objects(status.containerStatuses)) {
    const state = isObject(container.state) ? container.state : {};
    const waiting = isObject(state.waiting) ? state.waiting.reason : undefined;
    if (typeof waiting === 'string' && waiting !== '') return waiting;
    const terminated = isObject(state.terminated) ? state.terminated.reason : undefined;
    if (typeof terminated === 'string' && terminated !== '' && status.phase !== 'Succeeded')
      return terminated;
  }
  return typeof status.phase === 'string' ? status.phase : 'Unknown';
}

const podColumns: Column[] = [
  name,
  {
    name: 'Ready',
    type: 'string',
    cell: (pod) => {
      const statuses = objects(section(pod, 'status').containerStatuses);
      const total = objects(section(pod, 'spec').containers).length;
      return `${statuses.filter((c) => c.ready === true).length}/${total}`;
    },
  },
  { name: 'Status', type: 'string', cell: podStatusText },
  {
    name: 'Restarts',
    type: 'integer',
    cell: (pod) =>
      objects(section(pod, 'status').containerStatuses).reduce(
        (sum, c) => sum + count(c.restartCount),
        0,
      ),
  },
  age,
  {
    name: 'IP',
    type: 'string',
    priority: 1,
    cell: (pod) => text(section(pod, 'status').podIP, '<none>'),
  },
  {
    name: 'Node',
    type: 'string',
    priority: 1,
    cell: (pod) => text(section(pod, 'spec').nodeName, '<none>'),
  },
];

const workloadReady: Column = {
  name: 'Ready',
  type: 'string',
  cell: (o) => `${count(section(o, 'status').readyReplicas)}/${count(section(o, 'spec').replicas)}`,
};

const columnsByKind: Readonly<Record<string, Column[]>> = {
  Pod: podColumns,
  StatefulSet: [name, workloadReady, age],
  Deployment: [
    name,
    workloadReady,
    {
      name: 'Up-to-date',
      type: 'integer',
      cell: (o) => count(section(o, 'status').updatedReplicas),
    },
    {
      name: 'Available',
      type: 'integer',
      cell: (o) => count(section(o, 'status').availableReplicas),
    },
    age,
  ],
  Namespace: [
    name,
    { name: 'Status', type: 'string', cell: (o) => text(section(o, 'status').phase, '') },
    age,
  ],
};

function columnsOf(info: KindInfo): Column[] {
  return columnsByKind[info.kind] ?? [name, age];
}

/** A Table of `objects` (served form); `includeObject` as the query parameter says. */
export function toTable(options: {
  info: KindInfo;
  objects: readonly KubeObject[];
  now: number;
  includeObject: string | null;
  listMeta?: JsonObject;
}): JsonObject {
  const columns = columnsOf(options.info);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: options.listMeta ?? {},
    columnDefinitions: columns.map((column) => ({
      name: column.name,
      type: column.type,
      format: column.format ?? '',
      description: '',
      priority: column.priority ?? 0,
    })),
    rows: options.objects.map((object) => ({
      cells: columns.map((column) => column.cell(object, options.now)),
      ...(options.includeObject === 'None'
        ? {}
        : {
            object:
              options.includeObject === 'Object'
                ? object
                : {
                    kind: 'PartialObjectMetadata',
                    apiVersion: 'meta.k8s.io/v1',
                    metadata: object.metadata,
                  },
          }),
    })),
  };
}

// Server-side printing (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`): the columns the
// apiserver's printers give each kind (pkg/printers/internalversion/printers.go), wide ones
// (priority 1) included, as the apiserver always generates them; NAME and AGE for the rest.
import { isObject, objects, type JsonObject } from '../json.ts';
import type { KindInfo } from '../kinds.ts';
import {
  fromStructured,
  selectorToString,
  type StructuredSelector,
} from '../selectors/label-selector.ts';
import type { KubeObject } from '../types.ts';
import {
  age,
  count,
  humanDuration,
  name,
  orNone,
  section,
  text,
  type Column,
} from './table-cells.ts';
import { clusterColumns } from './table-cluster.ts';

export { humanDuration, wantsTable } from './table-cells.ts';

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
  {
    name: 'Nominated Node',
    type: 'string',
    priority: 1,
    cell: (pod) => text(section(pod, 'status').nominatedNodeName, '<none>'),
  },
  {
    name: 'Readiness Gates',
    type: 'string',
    priority: 1,
    cell: (pod) => {
      const gates = objects(section(pod, 'spec').readinessGates);
      if (gates.length === 0) return '<none>';
      const conditions = objects(section(pod, 'status').conditions);
      const met = gates.filter((gate) =>
        conditions.some((c) => c.type === gate.conditionType && c.status === 'True'),
      ).length;
      return `${met}/${gates.length}`;
    },
  },
];

const workloadReady: Column = {
  name: 'Ready',
  type: 'string',
  cell: (o) => `${count(section(o, 'status').readyReplicas)}/${count(section(o, 'spec').replicas)}`,
};

/** The pod template's containers and images, comma-separated (printers.go layoutContainerCells). */
function templateContainers(o: KubeObject): JsonObject[] {
  const template = section(o, 'spec').template;
  const spec = isObject(template) && isObject(template.spec) ? template.spec : {};
  return objects(spec.containers);
}
const containersColumn: Column = {
  name: 'Containers',
  type: 'string',
  priority: 1,
  cell: (o) =>
    templateContainers(o)
      .map((c) => text(c.name, ''))
      .join(','),
};
const imagesColumn: Column = {
  name: 'Images',
  type: 'string',
  priority: 1,
  cell: (o) =>
    templateContainers(o)
      .map((c) => text(c.image, ''))
      .join(','),
};
const selectorColumn: Column = {
  name: 'Selector',
  type: 'string',
  priority: 1,
  cell: (o) => {
    try {
      return orNone(
        selectorToString(fromStructured(section(o, 'spec').selector as StructuredSelector)),
      );
    } catch {
      return '<invalid>';
    }
  },
};

/** `k=v,k2=v2` sorted, or `<none>` (labels.FormatLabels). */
function formatLabels(value: unknown): string {
  if (!isObject(value)) return '<none>';
  const pairs = Object.entries(value)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${String(v)}`);
  return pairs.length === 0 ? '<none>' : pairs.join(',');
}

/** `80/TCP,443:30443/TCP` (printers.go makePortString). */
function servicePorts(service: KubeObject): string {
  return orNone(
    objects(section(service, 'spec').ports)
      .map((p) => {
        const protocol = text(p.protocol, 'TCP');
        return typeof p.nodePort === 'number' && p.nodePort > 0
          ? `${count(p.port)}:${p.nodePort}/${protocol}`
          : `${count(p.port)}/${protocol}`;
      })
      .join(','),
  );
}

/** printers.go getServiceExternalIP. */
function serviceExternalIP(service: KubeObject): string {
  const spec = section(service, 'spec');
  const external = Array.isArray(spec.externalIPs) ? spec.externalIPs.map(String) : [];
  switch (spec.type) {
    case 'ExternalName':
      return text(spec.externalName, '<none>');
    case 'LoadBalancer': {
      const ingress = objects(
        isObject(section(service, 'status').loadBalancer)
          ? (section(service, 'status').loadBalancer as JsonObject).ingress
          : undefined,
      ).map((i) => text(i.ip, text(i.hostname, '')));
      const all = [...ingress, ...external].filter((ip) => ip !== '');
      return all.length === 0 ? '<pending>' : all.join(',');
    }
    default:
      return external.length === 0 ? '<none>' : external.join(',');
  }
}

/** printers.go translateTimestampSince: `<unknown>` for a zero time. */
function since(value: unknown, now: number): string {
  const at = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isNaN(at) ? '<unknown>' : humanDuration(now - at);
}

/** printEvent: the first and last time, preferring the series of the new API. */
function eventTimes(
  event: KubeObject,
  now: number,
): { first: string; last: string; count: number } {
  const first =
    typeof event.firstTimestamp === 'string'
      ? since(event.firstTimestamp, now)
      : since(event.eventTime, now);
  let last = typeof event.lastTimestamp === 'string' ? since(event.lastTimestamp, now) : first;
  let total = count(event.count);
  if (isObject(event.series)) {
    last = since(event.series.lastObservedTime, now);
    total = count(event.series.count);
  } else if (total === 0) total = 1;
  return { first, last, count: total };
}

const involved = (event: KubeObject): JsonObject => section(event, 'involvedObject');

const eventColumns: Column[] = [
  { name: 'Last Seen', type: 'string', cell: (e, now) => eventTimes(e, now).last },
  { name: 'Type', type: 'string', cell: (e) => text(e.type, '') },
  { name: 'Reason', type: 'string', cell: (e) => text(e.reason, '') },
  {
    name: 'Object',
    type: 'string',
    cell: (e) => {
      const ref = involved(e);
      const kind = text(ref.kind, '').toLowerCase();
      const target = text(ref.name, '');
      return target === '' ? kind : `${kind}/${target}`;
    },
  },
  { name: 'Subobject', type: 'string', priority: 1, cell: (e) => text(involved(e).fieldPath, '') },
  {
    name: 'Source',
    type: 'string',
    priority: 1,
    cell: (e) => {
      const source = section(e, 'source');
      const component = text(source.component, text(e.reportingComponent, ''));
      const host = text(source.host, text(e.reportingInstance, ''));
      return host === '' ? component : `${component}, ${host}`;
    },
  },
  { name: 'Message', type: 'string', cell: (e) => text(e.message, '').trim() },
  { name: 'First Seen', type: 'string', priority: 1, cell: (e, now) => eventTimes(e, now).first },
  { name: 'Count', type: 'string', priority: 1, cell: (e, now) => eventTimes(e, now).count },
  { ...name, priority: 1 },
];

const dataCount = (o: KubeObject, ...keys: string[]): number =>
  keys.reduce((sum, key) => sum + (isObject(o[key]) ? Object.keys(o[key]).length : 0), 0);

/** The subjects of a RoleBinding by kind (rbac.SubjectsStrings). */
function subjects(binding: KubeObject, kind: string): string {
  return objects(binding.subjects)
    .filter((s) => s.kind === kind)
    .map((s) =>
      kind === 'ServiceAccount' ? `${text(s.namespace, '')}/${text(s.name, '')}` : text(s.name, ''),
    )
    .join(', ');
}

const columnsByKind: Readonly<Record<string, Column[]>> = {
  Pod: podColumns,
  StatefulSet: [name, workloadReady, age, containersColumn, imagesColumn],
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
    containersColumn,
    imagesColumn,
    selectorColumn,
  ],
  ReplicaSet: [
    name,
    { name: 'Desired', type: 'integer', cell: (o) => count(section(o, 'spec').replicas) },
    { name: 'Current', type: 'integer', cell: (o) => count(section(o, 'status').replicas) },
    { name: 'Ready', type: 'integer', cell: (o) => count(section(o, 'status').readyReplicas) },
    age,
    containersColumn,
    imagesColumn,
    selectorColumn,
  ],
  ControllerRevision: [
    name,
    {
      name: 'Controller',
      type: 'string',
      cell: (o) => {
        const ref = o.metadata.ownerReferences?.find((r) => r.controller === true);
        if (ref === undefined) return '<none>';
        const group = ref.apiVersion.includes('/') ? `.${ref.apiVersion.split('/')[0] ?? ''}` : '';
        return `${ref.kind.toLowerCase()}${group}/${ref.name}`;
      },
    },
    { name: 'Revision', type: 'integer', cell: (o) => count(o.revision) },
    age,
  ],
  Namespace: [
    name,
    { name: 'Status', type: 'string', cell: (o) => text(section(o, 'status').phase, '') },
    age,
  ],
  Event: eventColumns,
  Secret: [
    name,
    { name: 'Type', type: 'string', cell: (o) => text(o.type, '') },
    { name: 'Data', type: 'integer', cell: (o) => dataCount(o, 'data') },
    age,
  ],
  ConfigMap: [
    name,
    { name: 'Data', type: 'integer', cell: (o) => dataCount(o, 'data', 'binaryData') },
    age,
  ],
  Service: [
    name,
    { name: 'Type', type: 'string', cell: (o) => text(section(o, 'spec').type, '') },
    {
      name: 'Cluster-IP',
      type: 'string',
      cell: (o) => {
        const spec = section(o, 'spec');
        const ips = Array.isArray(spec.clusterIPs) ? spec.clusterIPs.map(String) : [];
        return ips[0] ?? '<none>';
      },
    },
    { name: 'External-IP', type: 'string', cell: serviceExternalIP },
    { name: 'Port(s)', type: 'string', cell: servicePorts },
    age,
    {
      name: 'Selector',
      type: 'string',
      priority: 1,
      cell: (o) => formatLabels(section(o, 'spec').selector),
    },
  ],
  ServiceAccount: [
    name,
    { name: 'Secrets', type: 'integer', cell: (o) => objects(o.secrets).length },
    age,
  ],
  Lease: [
    name,
    { name: 'Holder', type: 'string', cell: (o) => text(section(o, 'spec').holderIdentity, '') },
    age,
  ],
  Role: [
    name,
    {
      name: 'Created At',
      type: 'string',
      cell: (o) => o.metadata.creationTimestamp ?? '',
    },
  ],
  RoleBinding: [
    name,
    {
      name: 'Role',
      type: 'string',
      cell: (o) => {
        const ref = section(o, 'roleRef');
        return `${text(ref.kind, '')}/${text(ref.name, '')}`;
      },
    },
    age,
    { name: 'Users', type: 'string', priority: 1, cell: (o) => subjects(o, 'User') },
    { name: 'Groups', type: 'string', priority: 1, cell: (o) => subjects(o, 'Group') },
    {
      name: 'ServiceAccounts',
      type: 'string',
      priority: 1,
      cell: (o) => subjects(o, 'ServiceAccount'),
    },
  ],
};

function columnsOf(info: KindInfo): Column[] {
  return columnsByKind[info.kind] ?? clusterColumns[info.kind] ?? [name, age];
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

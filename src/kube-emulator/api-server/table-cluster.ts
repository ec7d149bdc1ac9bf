// Server-side printing of Nodes, Endpoints, EndpointSlices and PodDisruptionBudgets, as
// pkg/printers/internalversion/printers.go prints them (printNode, formatEndpoints,
// formatDiscoveryPorts/Endpoints with listWithMoreString, printPodDisruptionBudget).
import { isObject, objects } from '../json.ts';
import type { KubeObject } from '../types.ts';
import { age, count, name, section, text, type Column } from './table-cells.ts';

/** At most three entries, then ` + N more...` (formatEndpoints' `max`). */
const MAX = 3;

function withMore(list: readonly string[], total: number, empty: string): string {
  const shown = list.slice(0, MAX).join(',');
  if (total > MAX) return `${shown} + ${total - MAX} more...`;
  return shown === '' ? empty : shown;
}

/** formatEndpoints: `ip:port` per address and port, or the IPs of a subset without ports. */
function formatEndpoints(endpoints: KubeObject): string {
  const subsets = objects(endpoints.subsets);
  if (subsets.length === 0) return '<none>';
  const list: string[] = [];
  let total = 0;
  for (const subset of subsets) {
    const addresses = objects(subset.addresses).map((a) => text(a.ip, ''));
    const ports = objects(subset.ports);
    if (ports.length === 0) {
      total += addresses.length;
      list.push(...addresses);
      continue;
    }
    for (const port of ports) {
      total += addresses.length;
      const number = count(port.port);
      list.push(
        ...addresses.map((ip) => (ip.includes(':') ? `[${ip}]:${number}` : `${ip}:${number}`)),
      );
    }
  }
  // formatEndpoints returns the joined list even when empty (no `<unset>` here).
  return withMore(list, total, '');
}

/** The node's Ready condition, then SchedulingDisabled when cordoned (printNode). */
function nodeStatus(node: KubeObject): string {
  const ready = objects(section(node, 'status').conditions).find((c) => c.type === 'Ready');
  const status = [ready === undefined ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady'];
  if (section(node, 'spec').unschedulable === true) status.push('SchedulingDisabled');
  return status.join(',');
}

/** findNodeRoles: `node-role.kubernetes.io/<role>` labels and `kubernetes.io/role`, sorted. */
function nodeRoles(node: KubeObject): string {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(node.metadata.labels ?? {})) {
    if (key.startsWith('node-role.kubernetes.io/')) {
      const role = key.slice('node-role.kubernetes.io/'.length);
      if (role !== '') roles.add(role);
    } else if (key === 'kubernetes.io/role' && value !== '') roles.add(value);
  }
  return roles.size === 0 ? '<none>' : [...roles].sort().join(',');
}

function nodeAddress(node: KubeObject, type: string): string {
  const address = objects(section(node, 'status').addresses).find((a) => a.type === type);
  return text(address?.address, '<none>');
}

const nodeInfo = (node: KubeObject, key: string): string => {
  const info = section(node, 'status').nodeInfo;
  return text(isObject(info) ? info[key] : undefined, '<unknown>');
};

/** IntOrString.String(): the number, or the string as written; N/A when unset. */
function intOrString(value: unknown): string {
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' ? value : 'N/A';
}

export const clusterColumns: Readonly<Record<string, Column[]>> = {
  Node: [
    name,
    { name: 'Status', type: 'string', cell: nodeStatus },
    { name: 'Roles', type: 'string', cell: nodeRoles },
    age,
    {
      name: 'Version',
      type: 'string',
      cell: (o) => {
        const info = section(o, 'status').nodeInfo;
        return text(isObject(info) ? info.kubeletVersion : undefined, '');
      },
    },
    { name: 'Internal-IP', type: 'string', priority: 1, cell: (o) => nodeAddress(o, 'InternalIP') },
    { name: 'External-IP', type: 'string', priority: 1, cell: (o) => nodeAddress(o, 'ExternalIP') },
    { name: 'OS-Image', type: 'string', priority: 1, cell: (o) => nodeInfo(o, 'osImage') },
    {
      name: 'Kernel-Version',
      type: 'string',
      priority: 1,
      cell: (o) => nodeInfo(o, 'kernelVersion'),
    },
    {
      name: 'Container-Runtime',
      type: 'string',
      priority: 1,
      cell: (o) => nodeInfo(o, 'containerRuntimeVersion'),
    },
  ],
  Endpoints: [name, { name: 'Endpoints', type: 'string', cell: formatEndpoints }, age],
  EndpointSlice: [
    name,
    { name: 'AddressType', type: 'string', cell: (o) => text(o.addressType, '') },
    {
      name: 'Ports',
      type: 'string',
      cell: (o) => {
        const ports = objects(o.ports).map((p) =>
          typeof p.port === 'number' ? String(p.port) : text(p.name, '*'),
        );
        return withMore(ports, ports.length, '<unset>');
      },
    },
    {
      name: 'Endpoints',
      type: 'string',
      cell: (o) => {
        const addresses = objects(o.endpoints).flatMap((e) =>
          Array.isArray(e.addresses) ? e.addresses.map(String) : [],
        );
        return withMore(addresses, addresses.length, '<unset>');
      },
    },
    age,
  ],
  PodDisruptionBudget: [
    name,
    {
      name: 'Min Available',
      type: 'string',
      cell: (o) => intOrString(section(o, 'spec').minAvailable),
    },
    {
      name: 'Max Unavailable',
      type: 'string',
      cell: (o) => intOrString(section(o, 'spec').maxUnavailable),
    },
    {
      name: 'Allowed Disruptions',
      type: 'integer',
      cell: (o) => count(section(o, 'status').disruptionsAllowed),
    },
    age,
  ],
};

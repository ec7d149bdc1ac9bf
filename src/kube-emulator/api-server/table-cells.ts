// The cells of server-side printing that every kind's columns share: a column's shape, NAME and
// AGE, Kubernetes' HumanDuration, and the small readers of an object's sections.
import { isObject, type JsonObject } from '../json.ts';
import type { KubeObject } from '../types.ts';

export interface Column {
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

export const name: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  cell: (o) => o.metadata.name ?? '',
};
export const age: Column = {
  name: 'Age',
  type: 'string',
  cell: (o, now) => {
    const created = Date.parse(o.metadata.creationTimestamp ?? '');
    return Number.isNaN(created) ? '<unknown>' : humanDuration(now - created);
  },
};

export const section = (o: KubeObject, key: string): JsonObject => (isObject(o[key]) ? o[key] : {});
export const count = (value: unknown): number => (typeof value === 'number' ? value : 0);
export const text = (value: unknown, fallback: string): string =>
  typeof value === 'string' && value !== '' ? value : fallback;

/** `<none>` for an empty cell, as the printers write it. */
export const orNone = (value: string): string => (value === '' ? '<none>' : value);

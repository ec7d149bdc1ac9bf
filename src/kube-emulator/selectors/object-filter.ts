// Which stored objects a list or watch request selects: namespace, label and field selectors.
import { getPath } from '../json.ts';
import type { KindInfo } from '../kinds.ts';
import { parseFieldSelector, matchesFields, type FieldSelector } from './field-selector.ts';
import { matchesLabels, parseLabelSelector, type LabelSelector } from './label-selector.ts';
import type { KubeObject } from '../types.ts';

export interface ObjectFilter {
  matches(object: KubeObject): boolean;
}

export interface FilterQuery {
  info: KindInfo;
  /** Undefined selects every namespace. */
  namespace: string | undefined;
  labelSelector: string | undefined;
  fieldSelector: string | undefined;
}

/** Parses the selectors (400 on a bad one) and returns the predicate they define. */
export function objectFilter(query: FilterQuery): ObjectFilter {
  const { info, namespace } = query;
  const supported = new Set([
    'metadata.name',
    'metadata.namespace',
    ...Object.keys(info.fieldLabels),
  ]);
  const labels: LabelSelector = parseLabelSelector(query.labelSelector);
  const fields: FieldSelector = parseFieldSelector(query.fieldSelector, supported);
  const fieldValue = (object: KubeObject, field: string): string => {
    if (field === 'metadata.name') return object.metadata.name ?? '';
    if (field === 'metadata.namespace') return object.metadata.namespace ?? '';
    const path = info.fieldLabels[field];
    const value = path === undefined ? undefined : getPath(object, path);
    return value === undefined || value === null
      ? ''
      : typeof value === 'string'
        ? value
        : JSON.stringify(value);
  };
  return {
    matches(object) {
      if (namespace !== undefined && (object.metadata.namespace ?? '') !== namespace) return false;
      return (
        matchesLabels(labels, object.metadata.labels) &&
        matchesFields(fields, (field) => fieldValue(object, field))
      );
    },
  };
}

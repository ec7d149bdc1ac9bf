// events.k8s.io/v1 Events are stored as core/v1 Events: one store, two views (kube-api.md §4.10).
import type { JsonObject } from './json.ts';

/** Field pairs: events.k8s.io/v1 name → core/v1 name. */
const pairs: readonly (readonly [string, string])[] = [
  ['regarding', 'involvedObject'],
  ['related', 'related'],
  ['note', 'message'],
  ['reason', 'reason'],
  ['type', 'type'],
  ['action', 'action'],
  ['reportingController', 'reportingComponent'],
  ['reportingInstance', 'reportingInstance'],
  ['eventTime', 'eventTime'],
  ['series', 'series'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];

function copyFields(from: JsonObject, direction: 0 | 1): JsonObject {
  const result: JsonObject = { metadata: from.metadata };
  for (const pair of pairs) {
    const value = from[pair[direction]];
    if (value !== undefined) result[pair[direction === 0 ? 1 : 0]] = value;
  }
  return result;
}

export function eventToStorage(event: JsonObject): JsonObject {
  return { apiVersion: 'v1', kind: 'Event', ...copyFields(event, 0) };
}

export function eventFromStorage(event: JsonObject): JsonObject {
  return { apiVersion: 'events.k8s.io/v1', kind: 'Event', ...copyFields(event, 1) };
}

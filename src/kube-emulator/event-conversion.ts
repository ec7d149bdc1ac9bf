// events.k8s.io/v1 Events are stored as core/v1 Events: one store, two views, with the field
// mapping of pkg/apis/events/v1/conversion.go (Convert_v1_Event_To_core_Event and
// Convert_core_Event_To_v1_Event: regarding↔involvedObject, note↔message,
// reportingController↔reportingComponent, deprecatedSource↔source,
// deprecatedFirstTimestamp/LastTimestamp/Count↔firstTimestamp/lastTimestamp/count; related,
// reason, type, action, reportingInstance, eventTime and series as they are). Fields Go always
// writes (non-pointer structs and times) come out as Go writes them: `{}` and `null`.
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
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    eventTime: null,
    deprecatedSource: {},
    deprecatedFirstTimestamp: null,
    deprecatedLastTimestamp: null,
    ...copyFields(event, 1),
  };
}

/** The core/v1 form as the apiserver writes it: Go's zero values of the non-omitempty fields. */
export function coreEventDefaults(event: JsonObject): void {
  event.involvedObject ??= {};
  event.source ??= {};
  event.firstTimestamp ??= null;
  event.lastTimestamp ??= null;
  event.eventTime ??= null;
  event.reportingComponent ??= '';
  event.reportingInstance ??= '';
}

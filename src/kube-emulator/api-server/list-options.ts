// ListOptions validation (apimachinery pkg/apis/meta/internalversion/validation/validation.go,
// v0.32.4: ValidateListOptions and validateWatchOptions, the WatchList feature on as in 1.32):
// a 422 `ListOptions.meta.k8s.io ""` before anything is listed or watched.
import { forbiddenCause, notSupportedCause } from '../admission/field-errors.ts';
import { invalid, type StatusCause } from '../status-errors.ts';
import { boolParam } from './query-params.ts';

const MATCH = 'resourceVersionMatch';

function listCauses(query: URLSearchParams): StatusCause[] {
  const causes: StatusCause[] = [];
  const match = query.get(MATCH) ?? '';
  const version = query.get('resourceVersion') ?? '';
  const continued = (query.get('continue') ?? '') !== '';
  if (match !== '') {
    if (version === '')
      causes.push(
        forbiddenCause(
          MATCH,
          'resourceVersionMatch is forbidden unless resourceVersion is provided',
        ),
      );
    if (continued)
      causes.push(
        forbiddenCause(MATCH, 'resourceVersionMatch is forbidden when continue is provided'),
      );
    if (match !== 'Exact' && match !== 'NotOlderThan')
      causes.push(notSupportedCause(MATCH, match, ['Exact', 'NotOlderThan', '']));
    if (match === 'Exact' && version === '0')
      causes.push(
        forbiddenCause(MATCH, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
      );
  }
  if (query.has('sendInitialEvents'))
    causes.push(forbiddenCause('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return causes;
}

function watchCauses(query: URLSearchParams): StatusCause[] {
  const causes: StatusCause[] = [];
  const match = query.get(MATCH) ?? '';
  const initial = query.has('sendInitialEvents');
  if (initial && match !== 'NotOlderThan')
    causes.push(
      forbiddenCause(
        MATCH,
        'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      ),
    );
  if (match !== '') {
    if (!initial)
      causes.push(
        forbiddenCause(
          MATCH,
          'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        ),
      );
    if (match !== 'NotOlderThan') causes.push(notSupportedCause(MATCH, match, ['NotOlderThan']));
    if ((query.get('continue') ?? '') !== '')
      causes.push(
        forbiddenCause(MATCH, 'resourceVersionMatch is forbidden when continue is provided'),
      );
  }
  return causes;
}

/** Throws the apiserver's 422 when the list or watch options contradict each other. */
export function validateListOptions(query: URLSearchParams, watching: boolean): void {
  const causes = watching ? watchCauses(query) : listCauses(query);
  if (causes.length > 0)
    throw invalid({ group: 'meta.k8s.io', resource: '', kind: 'ListOptions', name: '' }, causes);
}

/** `sendInitialEvents` as given: true, false, or not given (the legacy semantics). */
export function initialEventsParam(query: URLSearchParams): boolean | undefined {
  return boolParam(query, 'sendInitialEvents');
}

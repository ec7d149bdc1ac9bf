// Deployments and StatefulSets (kubernetes pkg/apis/apps/validation/validation.go, v1.32):
// ValidateDeploymentSpec (replicas, minReadySeconds, revisionHistoryLimit, the strategy and its
// rolling-update bounds, progressDeadlineSeconds) and the numeric fields of a StatefulSet spec.
import { isObject } from '../json.ts';
import type { StatusCause } from '../status-errors.ts';
import type { KubeObject } from '../types.ts';
import {
  forbiddenCause,
  invalidCause,
  invalidRawCause,
  notSupportedCause,
  requiredCause,
} from './field-errors.ts';

const NON_NEGATIVE = 'must be greater than or equal to 0';

function nonNegative(spec: Record<string, unknown>, field: string): StatusCause[] {
  const value = spec[field];
  return typeof value === 'number' && value < 0
    ? [invalidCause(`spec.${field}`, value, NON_NEGATIVE)]
    : [];
}

/** An IntOrString as a number of pods or a percentage (`25%`), or a problem. */
function intOrPercent(
  value: unknown,
  field: string,
): { value: number; percent: boolean; causes: StatusCause[] } {
  if (typeof value === 'number') {
    return {
      value,
      percent: false,
      causes: value < 0 ? [invalidRawCause(field, String(value), NON_NEGATIVE)] : [],
    };
  }
  if (typeof value === 'string') {
    const match = /^(\d+)%$/.exec(value);
    if (match === null)
      return {
        value: 0,
        percent: true,
        causes: [
          invalidRawCause(
            field,
            value,
            "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
          ),
        ],
      };
    const percent = Number(match[1]);
    return {
      value: percent,
      percent: true,
      causes: percent > 100 ? [invalidRawCause(field, value, 'must not be greater than 100%')] : [],
    };
  }
  return { value: 0, percent: false, causes: [] };
}

/** ValidateDeploymentStrategy and ValidateRollingUpdateDeployment. */
function strategyCauses(strategy: unknown): StatusCause[] {
  if (!isObject(strategy)) return [];
  const type = strategy.type;
  if (type === 'Recreate')
    return strategy.rollingUpdate === undefined || strategy.rollingUpdate === null
      ? []
      : [
          forbiddenCause(
            'spec.strategy.rollingUpdate',
            "may not be specified when strategy `type` is 'Recreate'",
          ),
        ];
  if (type !== 'RollingUpdate')
    return [notSupportedCause('spec.strategy.type', type ?? '', ['Recreate', 'RollingUpdate'])];
  if (!isObject(strategy.rollingUpdate))
    return [
      requiredCause('spec.strategy.rollingUpdate', 'this should be defaulted and never be nil'),
    ];
  const unavailable = intOrPercent(
    strategy.rollingUpdate.maxUnavailable,
    'spec.strategy.rollingUpdate.maxUnavailable',
  );
  const surge = intOrPercent(
    strategy.rollingUpdate.maxSurge,
    'spec.strategy.rollingUpdate.maxSurge',
  );
  const causes = [...unavailable.causes, ...surge.causes];
  if (unavailable.value === 0 && surge.value === 0)
    causes.push(
      invalidRawCause(
        'spec.strategy.rollingUpdate.maxUnavailable',
        `${unavailable.value}${unavailable.percent ? '%' : ''}`,
        'may not be 0 when `maxSurge` is 0',
      ),
    );
  return causes;
}

/** ValidateDeploymentSpec's field rules (the selector and template are kind-rules.ts's). */
export function deploymentRule(object: KubeObject): StatusCause[] {
  const spec = isObject(object.spec) ? object.spec : {};
  const causes = [
    ...nonNegative(spec, 'replicas'),
    ...nonNegative(spec, 'minReadySeconds'),
    ...nonNegative(spec, 'revisionHistoryLimit'),
    ...strategyCauses(spec.strategy),
  ];
  const deadline = spec.progressDeadlineSeconds;
  const minReady = typeof spec.minReadySeconds === 'number' ? spec.minReadySeconds : 0;
  if (typeof deadline === 'number') {
    if (deadline < 0)
      causes.push(invalidCause('spec.progressDeadlineSeconds', deadline, NON_NEGATIVE));
    else if (deadline <= minReady)
      causes.push(
        invalidCause(
          'spec.progressDeadlineSeconds',
          deadline,
          'must be greater than minReadySeconds',
        ),
      );
  }
  return causes;
}

/** ValidateStatefulSetSpec's numeric fields. */
export function statefulSetRule(object: KubeObject): StatusCause[] {
  const spec = isObject(object.spec) ? object.spec : {};
  return [
    ...nonNegative(spec, 'replicas'),
    ...nonNegative(spec, 'minReadySeconds'),
    ...nonNegative(spec, 'revisionHistoryLimit'),
  ];
}

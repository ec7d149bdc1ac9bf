// The pods/eviction subresource (pkg/registry/core/pod/storage/eviction.go, Kubernetes 1.32):
// POST an Eviction (policy/v1 or v1beta1) named as the pod. A pod that is Pending, terminal or
// already being deleted is deleted at once (canIgnorePDB). Otherwise the PodDisruptionBudgets
// of its namespace whose selector matches it are consulted (getPodDisruptionBudgets; a nil or
// empty selector matches nothing): more than one → a 500 Status; none → the pod is deleted; one →
// checkAndDecrement: a status not yet observed for the budget's generation → 429 "still being
// processed" (Retry-After 10); disruptionsAllowed 0 → 429 "Cannot evict pod as it would violate
// the pod's disruption budget." with the DisruptionBudget cause "The disruption budget X needs D
// healthy pods and has C currently"; otherwise disruptionsAllowed is decremented and the pod
// recorded in status.disruptedPods before the delete (the disruption controller forgets it once
// it sees the pod go). A pod that is not Ready while the budget is met (currentHealthy >=
// desiredHealthy > 0) is deleted without decrementing. Success is `Status{status: Success}`
// answered 201 (handlers/create.go fills a zero code with 201).
import { rfc3339 } from '../clock.ts';
import { clone, isObject, objects, type JsonObject } from '../json.ts';
import { kindOf, podInfo } from '../kinds.ts';
import type { DeleteOptions, ResourceApi } from '../resource-api.ts';
import { fromStructured, matchesLabels } from '../selectors/label-selector.ts';
import { ApiError, badRequest } from '../status-errors.ts';
import type { KubeObject } from '../types.ts';

export const pdbInfo = kindOf('policy', 'poddisruptionbudgets');
/** MaxDisruptedPodSize (eviction.go). */
const MAX_DISRUPTED_PODS = 2000;
/** policyv1.DisruptionBudgetCause. */
const DISRUPTION_BUDGET_CAUSE = 'DisruptionBudget';

const status = (object: KubeObject): JsonObject => (isObject(object.status) ? object.status : {});
const num = (value: unknown): number => (typeof value === 'number' ? value : 0);

/** errors.NewTooManyRequests with one DisruptionBudget cause. */
function budgetRefusal(message: string, retryAfterSeconds: number): ApiError {
  return new ApiError({
    code: 429,
    reason: 'TooManyRequests',
    message: "Cannot evict pod as it would violate the pod's disruption budget.",
    details: {
      causes: [{ reason: DISRUPTION_BUDGET_CAUSE, message }],
      ...(retryAfterSeconds > 0 ? { retryAfterSeconds } : {}),
    },
    ...(retryAfterSeconds > 0 ? { headers: { 'Retry-After': String(retryAfterSeconds) } } : {}),
  });
}

/** errors.NewForbidden(policy.Resource("poddisruptionbudget"), name, err). */
function budgetForbidden(name: string, why: string): ApiError {
  return new ApiError({
    code: 403,
    reason: 'Forbidden',
    message: `poddisruptionbudget.policy "${name}" is forbidden: ${why}`,
    details: { name, group: 'policy', kind: 'poddisruptionbudget' },
  });
}

/** podutil.IsPodReady. */
export function isPodReady(pod: KubeObject): boolean {
  return objects(status(pod).conditions).some((c) => c.type === 'Ready' && c.status === 'True');
}

function canIgnorePdb(pod: KubeObject): boolean {
  const phase = status(pod).phase;
  return (
    phase === 'Succeeded' ||
    phase === 'Failed' ||
    phase === 'Pending' ||
    pod.metadata.deletionTimestamp !== undefined
  );
}

/** The budgets of the pod's namespace that select it (a nil or empty selector selects nothing). */
export function budgetsOf(api: ResourceApi, pod: KubeObject): KubeObject[] {
  return api.store.list(pdbInfo.storage, pod.metadata.namespace ?? '').filter((pdb) => {
    const spec = isObject(pdb.spec) ? pdb.spec : {};
    if (!isObject(spec.selector)) return false;
    try {
      const selector = fromStructured(spec.selector);
      return selector.length > 0 && matchesLabels(selector, pod.metadata.labels);
    } catch {
      return false; // an invalid selector matches no pod
    }
  });
}

/** The Eviction's deleteOptions as the store's (propagateDryRun: the query's dryRun counts too). */
function deleteOptionsOf(eviction: JsonObject, dryRun: boolean): DeleteOptions {
  const options = isObject(eviction.deleteOptions) ? eviction.deleteOptions : {};
  const preconditions = isObject(options.preconditions) ? options.preconditions : undefined;
  const evictionDryRun = Array.isArray(options.dryRun) && options.dryRun.length > 0;
  return {
    ...(typeof options.gracePeriodSeconds === 'number'
      ? { gracePeriodSeconds: options.gracePeriodSeconds }
      : {}),
    ...(preconditions === undefined
      ? {}
      : {
          preconditions: {
            ...(typeof preconditions.uid === 'string' ? { uid: preconditions.uid } : {}),
            ...(typeof preconditions.resourceVersion === 'string'
              ? { resourceVersion: preconditions.resourceVersion }
              : {}),
          },
        }),
    ...(dryRun || evictionDryRun ? { dryRun: true } : {}),
  };
}

export interface EvictionRequest {
  api: ResourceApi;
  namespace: string;
  name: string;
  body: unknown;
  dryRun: boolean;
}

/** Evicts the pod; answers the Status to send (201 Success, or the 500 of several budgets). */
export function evictPod(request: EvictionRequest): { status: number; body: JsonObject } {
  const { api, namespace, name } = request;
  const eviction = isObject(request.body) ? request.body : {};
  const meta = isObject(eviction.metadata) ? eviction.metadata : {};
  if (meta.name !== name) throw badRequest('name in URL does not match name in Eviction object');
  const options = deleteOptionsOf(eviction, request.dryRun);
  const pod = api.get(podInfo, namespace, name);
  const success = { status: 201, body: statusBody('Success', 201) };
  if (canIgnorePdb(pod)) {
    api.delete(podInfo, namespace, name, options);
    return success;
  }
  const budgets = budgetsOf(api, pod);
  if (budgets.length > 1) {
    return {
      status: 500,
      body: {
        ...statusBody('Failure', 500),
        message:
          'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
      },
    };
  }
  const pdb = budgets[0];
  let pinned = options;
  if (pdb !== undefined) {
    const current = status(pdb);
    const desired = num(current.desiredHealthy);
    if (!isPodReady(pod) && num(current.currentHealthy) >= desired && desired > 0) {
      // Not counted as healthy: no decrement, but the pod must not have become ready since.
      pinned = {
        ...options,
        preconditions: {
          ...options.preconditions,
          resourceVersion: pod.metadata.resourceVersion ?? '',
        },
      };
    } else {
      checkAndDecrement(request, pdb, options.dryRun === true);
    }
  }
  api.delete(podInfo, namespace, name, pinned);
  return success;
}

function statusBody(outcome: 'Success' | 'Failure', code: number): JsonObject {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: outcome, code };
}

function checkAndDecrement(request: EvictionRequest, pdb: KubeObject, dryRun: boolean): void {
  const pdbName = pdb.metadata.name ?? '';
  const current = status(pdb);
  if (num(current.observedGeneration) < num(pdb.metadata.generation))
    throw budgetRefusal(
      `The disruption budget ${pdbName} is still being processed by the server.`,
      10,
    );
  const allowed = num(current.disruptionsAllowed);
  if (allowed < 0) throw budgetForbidden(pdbName, 'pdb disruptions allowed is negative');
  const disrupted = isObject(current.disruptedPods) ? current.disruptedPods : {};
  if (Object.keys(disrupted).length > MAX_DISRUPTED_PODS)
    throw budgetForbidden(
      pdbName,
      'DisruptedPods map too big - too many evictions not confirmed by PDB controller',
    );
  if (allowed === 0)
    throw budgetRefusal(
      `The disruption budget ${pdbName} needs ${num(current.desiredHealthy)} healthy pods and has ${num(current.currentHealthy)} currently`,
      0,
    );
  if (dryRun) return;
  const next = clone(pdb);
  const nextStatus = status(next);
  nextStatus.disruptionsAllowed = allowed - 1;
  // pdbhelper.UpdateDisruptionAllowedCondition once none is left.
  if (allowed - 1 === 0) setDisruptionAllowed(nextStatus, false, rfc3339(request.api.now()));
  nextStatus.disruptedPods = { ...disrupted, [request.name]: rfc3339(request.api.now()) };
  next.status = nextStatus;
  request.api.write(pdbInfo, next, 'status');
}

/**
 * component-helpers/apps/poddisruptionbudget UpdateDisruptionAllowedCondition: the
 * DisruptionAllowed condition, True/SufficientPods or False/InsufficientPods, its transition time
 * kept while the status stays; observedGeneration follows the status's.
 */
export function setDisruptionAllowed(pdbStatus: JsonObject, allowed: boolean, now: string): void {
  const conditions = objects(pdbStatus.conditions).filter((c) => c.type !== 'DisruptionAllowed');
  const previous = objects(pdbStatus.conditions).find((c) => c.type === 'DisruptionAllowed');
  const value = allowed ? 'True' : 'False';
  conditions.push({
    type: 'DisruptionAllowed',
    status: value,
    observedGeneration: num(pdbStatus.observedGeneration),
    lastTransitionTime:
      previous?.status === value && typeof previous.lastTransitionTime === 'string'
        ? previous.lastTransitionTime
        : now,
    reason: allowed ? 'SufficientPods' : 'InsufficientPods',
    message: '',
  });
  pdbStatus.conditions = conditions;
}

// The cluster's intent per validator id, from the StatefulSets (which ordinals are wanted) and the
// pods (readiness, holds, drains). Wanted-ness comes from the StatefulSet's spec, never from a
// pod's existence, so a pod that restarts or is recreated stays wanted (docs/design.md §The rule that decides).
import type { V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import type { LabelMatcher } from '../kube/label-selector.ts';
import {
  Annotations,
  type DesiredState,
  type DesiredValidator,
  type StatefulSetView,
  type ValidatorId,
} from '../model.ts';
import { ordinalOf, type IdMapper } from './id-mapping.ts';
import { isPodReady, toPodView } from './pod-view.ts';

export interface DesiredStateInput {
  namespace: string;
  statefulSets: readonly V1StatefulSet[];
  pods: readonly V1Pod[];
  /** Matches a StatefulSet's pod template labels against the validator pod selector. */
  isValidatorTemplate: LabelMatcher;
  mapper: IdMapper;
  serviceUrlTemplate: string;
  nodeRpcPortName: string;
  now: number;
}

/**
 * Memory that outlives one computation: since when each pod (by uid) has been Ready, and (for
 * the annotation mapping) the id last seen on each pod name.
 */
export class DiscoveryMemory {
  readonly readySince = new Map<string, number>();
  /** Uids of pods that were Ready and lost it (they flap: the Ready debounce applies). */
  readonly lostReady = new Set<string>();
  readonly idByPodName = new Map<string, ValidatorId>();
}

function statefulSetView(sts: V1StatefulSet): StatefulSetView {
  const target = sts.metadata?.annotations?.[Annotations.scaleTarget];
  return {
    name: sts.metadata?.name ?? '',
    namespace: sts.metadata?.namespace ?? '',
    uid: sts.metadata?.uid ?? '',
    replicas: sts.spec?.replicas ?? 1,
    serviceName: sts.spec?.serviceName ?? '',
    scaleTarget: target !== undefined && /^\d+$/.test(target) ? Number(target) : undefined,
  };
}

function controllerName(pod: V1Pod): string | undefined {
  return pod.metadata?.ownerReferences?.find(
    (ref) => ref.controller === true && ref.kind === 'StatefulSet',
  )?.name;
}

/** Computes the desired state and updates `memory`. */
export function computeDesiredState(
  input: DesiredStateInput,
  memory: DiscoveryMemory,
): DesiredState {
  const problems: string[] = [];
  const unresolvedWanted: string[] = [];
  const byId = new Map<ValidatorId, DesiredValidator>();
  const claims = new Map<ValidatorId, string[]>();

  const validatorSets = new Map<string, V1StatefulSet>();
  for (const sts of input.statefulSets) {
    const deleting = sts.metadata?.deletionTimestamp !== undefined;
    if (!deleting && input.isValidatorTemplate(sts.spec?.template.metadata?.labels)) {
      validatorSets.set(sts.metadata?.name ?? '', sts);
    }
  }
  const podsByName = new Map(input.pods.map((pod) => [pod.metadata?.name ?? '', pod]));

  // Ready-since memory: keep spells of pods that are still Ready, forget the rest.
  const liveUids = new Set<string>();
  for (const pod of input.pods) {
    const uid = pod.metadata?.uid ?? '';
    if (isPodReady(pod)) {
      liveUids.add(uid);
      if (!memory.readySince.has(uid)) memory.readySince.set(uid, input.now);
    }
  }
  const podUids = new Set(input.pods.map((pod) => pod.metadata?.uid ?? ''));
  for (const uid of memory.readySince.keys()) {
    if (liveUids.has(uid)) continue;
    memory.readySince.delete(uid);
    if (podUids.has(uid)) memory.lostReady.add(uid);
  }
  for (const uid of memory.lostReady) if (!podUids.has(uid)) memory.lostReady.delete(uid);

  const add = (entry: DesiredValidator, claimant: string): void => {
    const list = claims.get(entry.id) ?? [];
    list.push(claimant);
    claims.set(entry.id, list);
    if (!byId.has(entry.id) || (entry.wanted && byId.get(entry.id)?.wanted !== true))
      byId.set(entry.id, entry);
  };

  // 1. Every ordinal a validator StatefulSet wants, whether or not its pod exists right now.
  for (const sts of validatorSets.values()) {
    const view = statefulSetView(sts);
    for (let ordinal = 0; ordinal < view.replicas; ordinal++) {
      const podName = `${view.name}-${ordinal}`;
      const pod = podsByName.get(podName);
      const annotations = pod?.metadata?.annotations;
      let result = input.mapper.idOf({ name: podName, ordinal, annotations });
      if ('problem' in result && pod === undefined && !input.mapper.derivableFromName) {
        const remembered = memory.idByPodName.get(podName);
        if (remembered === undefined) {
          unresolvedWanted.push(podName);
          continue;
        }
        result = { id: remembered };
      }
      if ('problem' in result) {
        problems.push(result.problem);
        continue;
      }
      if (pod !== undefined) memory.idByPodName.set(podName, result.id);
      const podView =
        pod === undefined
          ? undefined
          : viewOf(pod, { statefulSet: view, ordinal, id: result.id, input, memory });
      // A drain is recorded on the StatefulSet too, so a leaving pod that is missing or was
      // recreated without its annotation still counts as leaving.
      const draining =
        podView?.draining === true ||
        (view.scaleTarget !== undefined && ordinal >= view.scaleTarget);
      add(
        {
          id: result.id,
          wanted: !draining,
          wantedReason: draining
            ? `pod ${podName} is draining (scale-down to ${view.scaleTarget ?? '?'} in progress)`
            : `ordinal ${ordinal} of StatefulSet ${view.name} is below replicas ${view.replicas}`,
          statefulSet: view,
          ordinal,
          pod: podView,
          conflict: undefined,
        },
        podName,
      );
    }
  }

  // 2. Pods that exist but are not (or no longer) wanted.
  for (const pod of input.pods) {
    const podName = pod.metadata?.name ?? '';
    const ownerName = controllerName(pod);
    const owner = ownerName === undefined ? undefined : validatorSets.get(ownerName);
    const view = owner === undefined ? undefined : statefulSetView(owner);
    const ordinal = ownerName === undefined ? undefined : ordinalOf(podName, ownerName);
    if (view !== undefined && ordinal !== undefined && ordinal < view.replicas) continue; // handled above
    const result = input.mapper.idOf({
      name: podName,
      ordinal,
      annotations: pod.metadata?.annotations,
    });
    if ('problem' in result) {
      problems.push(result.problem);
      continue;
    }
    memory.idByPodName.set(podName, result.id);
    const reason =
      ownerName === undefined
        ? `pod ${podName} has no controlling StatefulSet`
        : view === undefined
          ? `StatefulSet ${ownerName} is gone or not a validator set`
          : `ordinal ${ordinal ?? '?'} of StatefulSet ${view.name} is not below replicas ${view.replicas}`;
    add(
      {
        id: result.id,
        wanted: false,
        wantedReason: reason,
        statefulSet: view,
        ordinal,
        pod: viewOf(pod, { statefulSet: view, ordinal, id: result.id, input, memory }),
        conflict: undefined,
      },
      podName,
    );
  }

  // 3. Ids claimed by two different pods are conflicts: reported, never acted on.
  for (const [id, claimants] of claims) {
    const distinct = [...new Set(claimants)];
    if (distinct.length > 1) {
      const entry = byId.get(id);
      const conflict = `id ${id} is claimed by ${distinct.join(' and ')}`;
      problems.push(conflict);
      if (entry !== undefined) byId.set(id, { ...entry, conflict });
    }
  }
  return { validators: byId, unresolvedWanted, problems };
}

function viewOf(
  pod: V1Pod,
  where: {
    statefulSet: StatefulSetView | undefined;
    ordinal: number | undefined;
    id: ValidatorId;
    input: DesiredStateInput;
    memory: DiscoveryMemory;
  },
): ReturnType<typeof toPodView> {
  const { statefulSet, ordinal, id, input, memory } = where;
  return toPodView(pod, {
    namespace: input.namespace,
    statefulSet,
    ordinal,
    id,
    serviceUrlTemplate: input.serviceUrlTemplate,
    nodeRpcPortName: input.nodeRpcPortName,
    readySince: memory.readySince.get(pod.metadata?.uid ?? ''),
    lostReady: memory.lostReady.has(pod.metadata?.uid ?? ''),
  });
}

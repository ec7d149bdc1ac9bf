// Pods and pod templates (kubernetes pkg/apis/core/validation/validation.go, v1.32):
// validateContainers/validateContainerCommon (names, images, ports, duplicates) and
// ValidatePodUpdate (what an update may change in a pod's spec).
import { clone, deepEqual, isObject, objects, type JsonObject } from '../json.ts';
import type { StatusCause } from '../status-errors.ts';
import type { KubeObject } from '../types.ts';
import {
  duplicateCause,
  forbiddenCause,
  goValue,
  invalidCause,
  requiredCause,
} from './field-errors.ts';
import { isDns1123Label } from './name-formats.ts';

/** One list of containers (`spec.containers`, `spec.initContainers`) of a pod spec at `path`. */
function containerCauses(list: readonly JsonObject[], path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  list.forEach((container, index) => {
    const at = `${path}[${index}]`;
    const name = typeof container.name === 'string' ? container.name : '';
    if (name === '') causes.push(requiredCause(`${at}.name`));
    else
      for (const message of isDns1123Label(name))
        causes.push(invalidCause(`${at}.name`, name, message));
    if (typeof container.image !== 'string' || container.image === '')
      causes.push(requiredCause(`${at}.image`));
    causes.push(...portCauses(objects(container.ports), `${at}.ports`));
    if (name !== '' && names.has(name)) causes.push(duplicateCause(`${at}.name`, name));
    names.add(name);
  });
  return causes;
}

/** validateContainerPorts: containerPort in 1–65535, port names unique. */
function portCauses(ports: readonly JsonObject[], path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  ports.forEach((port, index) => {
    const at = `${path}[${index}]`;
    const number = port.containerPort;
    if (number === undefined || number === 0) causes.push(requiredCause(`${at}.containerPort`));
    else if (typeof number !== 'number' || number < 1 || number > 65535)
      causes.push(
        invalidCause(`${at}.containerPort`, number, 'must be between 1 and 65535, inclusive'),
      );
    if (typeof port.name === 'string' && port.name !== '') {
      if (names.has(port.name)) causes.push(duplicateCause(`${at}.name`, port.name));
      names.add(port.name);
    }
  });
  return causes;
}

/** The containers of a pod spec at `path` (`spec`, `spec.template.spec`). */
export function podSpecContainerCauses(spec: JsonObject, path: string): StatusCause[] {
  const causes = containerCauses(objects(spec.containers), `${path}.containers`);
  const init = objects(spec.initContainers);
  causes.push(...containerCauses(init, `${path}.initContainers`));
  const regular = new Set(objects(spec.containers).map((c) => c.name));
  init.forEach((container, index) => {
    if (regular.has(container.name))
      causes.push(duplicateCause(`${path}.initContainers[${index}].name`, container.name));
  });
  return causes;
}

/** The fields ValidatePodUpdate lets an update change (updatablePodSpecFieldsNoResources). */
const UPDATABLE =
  '`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** The paths at which two JSON values differ, for the diff the refusal carries. */
function differences(a: unknown, b: unknown, path: string, out: string[]): void {
  if (deepEqual(a, b)) return;
  if (isObject(a) && isObject(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)]))
      differences(a[key], b[key], `${path}.${key}`, out);
    return;
  }
  out.push(`- ${path}: ${JSON.stringify(a ?? null)}\n+ ${path}: ${JSON.stringify(b ?? null)}`);
}

/**
 * ValidatePodUpdate: the spec may change only in its containers' images, activeDeadlineSeconds,
 * added tolerations and a negative terminationGracePeriodSeconds set to 1; the rest is
 * compared with the old spec (the "munged" spec). Binding (`nodeName` set once, the
 * scheduler's) and ephemeral containers (their own subresource) are not updates of the spec.
 */
export function podUpdateRule(object: KubeObject, old: KubeObject | undefined): StatusCause[] {
  if (old === undefined) return [];
  const oldSpec = isObject(old.spec) ? old.spec : {};
  const munged = clone(isObject(object.spec) ? object.spec : {});
  if (objects(munged.containers).length !== objects(oldSpec.containers).length)
    return [forbiddenCause('spec.containers', 'pod updates may not add or remove containers')];
  for (const list of ['containers', 'initContainers']) {
    const before = objects(oldSpec[list]);
    objects(munged[list]).forEach((container, index) => {
      const previous = before[index];
      if (previous !== undefined) container.image = previous.image;
    });
  }
  const causes: StatusCause[] = [];
  const deadline = munged.activeDeadlineSeconds;
  const oldDeadline = oldSpec.activeDeadlineSeconds;
  if (typeof deadline === 'number' && typeof oldDeadline === 'number' && oldDeadline < deadline)
    return [
      invalidCause(
        'spec.activeDeadlineSeconds',
        deadline,
        'must be less than or equal to previous value',
      ),
    ];
  if (deadline === undefined && typeof oldDeadline === 'number')
    causes.push(
      invalidCause(
        'spec.activeDeadlineSeconds',
        null,
        'must not update from a positive integer to nil value',
      ),
    );
  if (oldDeadline === undefined) delete munged.activeDeadlineSeconds;
  else munged.activeDeadlineSeconds = oldDeadline;
  // validateOnlyAddedTolerations; then the tolerations are munged to the old ones.
  const newTolerations = objects(munged.tolerations);
  const seconds = ({ tolerationSeconds: _s, ...rest }: JsonObject): JsonObject => rest;
  objects(oldSpec.tolerations).forEach((toleration, index) => {
    if (!newTolerations.some((t) => deepEqual(seconds(t), seconds(toleration))))
      causes.push(
        forbiddenCause(
          `spec.tolerations[${index}]`,
          'existing toleration can not be modified except its tolerationSeconds',
        ),
      );
  });
  if (oldSpec.tolerations === undefined) delete munged.tolerations;
  else munged.tolerations = clone(oldSpec.tolerations);
  const grace = oldSpec.terminationGracePeriodSeconds;
  if (typeof grace === 'number' && grace < 0 && munged.terminationGracePeriodSeconds === 1)
    munged.terminationGracePeriodSeconds = grace;
  if ((oldSpec.nodeName ?? '') === '') {
    if (oldSpec.nodeName === undefined) delete munged.nodeName;
    else munged.nodeName = oldSpec.nodeName;
  }
  munged.ephemeralContainers = clone(oldSpec.ephemeralContainers);
  if (oldSpec.ephemeralContainers === undefined) delete munged.ephemeralContainers;
  if (!deepEqual(munged, oldSpec)) {
    const diff: string[] = [];
    differences(oldSpec, munged, 'spec', diff);
    causes.push(
      forbiddenCause(
        'spec',
        `pod updates may not change fields other than ${UPDATABLE}\n${diff.join('\n')}`,
      ),
    );
  }
  return causes;
}

/**
 * The fields an ephemeral container may not set (validation.go `allowedEphemeralContainerFields`,
 * the entries set to false): it must not be relied upon for the pod's own service.
 */
const EPHEMERAL_FORBIDDEN = [
  'ports',
  'resources',
  'resizePolicy',
  'restartPolicy',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
];

/** A field is set when Go's reflect would find it non-zero (validateFieldAllowList). */
function isSet(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isObject(value)) return Object.keys(value).length > 0;
  return value !== '' && value !== 0 && value !== false;
}

/**
 * validation.go `validateEphemeralContainers` (v1.32): each entry is a container (name, image),
 * its name unique across containers, init containers and ephemeral containers (Duplicate), its
 * `targetContainerName` a regular or init container (NotFound), no field of
 * EPHEMERAL_FORBIDDEN, no `subPath`/`subPathExpr` in its volume mounts.
 */
export function ephemeralContainerCauses(spec: JsonObject, path: string): StatusCause[] {
  const list = objects(spec.ephemeralContainers);
  const at = `${path}.ephemeralContainers`;
  const causes = containerCauses(list, at).filter(
    (cause) => cause.reason !== 'FieldValueDuplicate',
  );
  const others = new Set(
    [...objects(spec.containers), ...objects(spec.initContainers)].map((c) => c.name),
  );
  const all = new Set(others);
  list.forEach((container, index) => {
    const item = `${at}[${index}]`;
    if (all.has(container.name)) causes.push(duplicateCause(`${item}.name`, container.name));
    else all.add(container.name);
    const target = container.targetContainerName;
    if (typeof target === 'string' && target !== '' && !others.has(target))
      causes.push({
        reason: 'FieldValueNotFound',
        field: `${item}.targetContainerName`,
        message: `Not found: ${goValue(target)}`,
      });
    for (const field of EPHEMERAL_FORBIDDEN)
      if (isSet(container[field]))
        causes.push(forbiddenCause(`${item}.${field}`, 'cannot be set for an Ephemeral Container'));
    objects(container.volumeMounts).forEach((mount, m) => {
      for (const field of ['subPath', 'subPathExpr'])
        if (isSet(mount[field]))
          causes.push(
            forbiddenCause(
              `${item}.volumeMounts[${m}].${field}`,
              'cannot be set for an Ephemeral Container',
            ),
          );
    });
  });
  return causes;
}

/** ValidatePodCreate: `spec.ephemeralContainers` cannot be set on create (only by the subresource). */
export function ephemeralOnCreateRule(
  object: KubeObject,
  old: KubeObject | undefined,
): StatusCause[] {
  if (old !== undefined || !isObject(object.spec)) return [];
  return objects(object.spec.ephemeralContainers).length > 0
    ? [forbiddenCause('spec.ephemeralContainers', 'cannot be set on create')]
    : [];
}

/**
 * pkg/registry/core/pod/strategy.go `dropNonEphemeralContainerUpdates` (the
 * `pods/ephemeralcontainers` strategy's PrepareForUpdate): of the incoming pod only
 * `spec.ephemeralContainers` is kept; spec, status and metadata are the stored pod's
 * (ResetObjectMetaForStatus).
 */
export function keepOnlyEphemeralContainers(
  existing: KubeObject,
  incoming: KubeObject,
): KubeObject {
  const next = clone(existing);
  const spec = isObject(next.spec) ? next.spec : (next.spec = {});
  const wanted = isObject(incoming.spec) ? incoming.spec.ephemeralContainers : undefined;
  if (wanted === undefined || wanted === null) delete spec.ephemeralContainers;
  else spec.ephemeralContainers = clone(wanted);
  return next;
}

/**
 * validation.go `ValidatePodEphemeralContainersUpdate`, part 2 (v1.32): an existing ephemeral
 * container may not be removed or changed (compared by name, as a patch does not keep order).
 * Go's message ends with a `cmp.Diff` of the two; here a list of the fields that differ.
 */
export function ephemeralContainersUpdateCauses(next: KubeObject, old: KubeObject): StatusCause[] {
  const field = 'spec.ephemeralContainers';
  if (old.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined)
    return [forbiddenCause('', 'static pods do not support ephemeral containers')];
  const byName = new Map(
    objects(isObject(next.spec) ? next.spec.ephemeralContainers : undefined).map((c) => [
      c.name,
      c,
    ]),
  );
  const causes: StatusCause[] = [];
  for (const before of objects(isObject(old.spec) ? old.spec.ephemeralContainers : undefined)) {
    const name = String(before.name);
    const after = byName.get(before.name);
    if (after === undefined)
      causes.push(
        forbiddenCause(
          field,
          `existing ephemeral containers ${JSON.stringify(name)} may not be removed\n`,
        ),
      );
    else if (!deepEqual(before, after)) {
      const diff: string[] = [];
      differences(before, after, `${field}[${name}]`, diff);
      causes.push(
        forbiddenCause(
          `${field}[${name}]`,
          `existing ephemeral containers ${JSON.stringify(name)} may not be changed\n${diff.join('\n')}`,
        ),
      );
    }
  }
  return causes;
}

// Pods and pod templates (kubernetes pkg/apis/core/validation/validation.go, v1.32):
// validateContainers/validateContainerCommon (names, images, ports, duplicates) and
// ValidatePodUpdate (what an update may change in a pod's spec).
import { clone, deepEqual, isObject, objects, type JsonObject } from '../json.ts';
import type { StatusCause } from '../status-errors.ts';
import type { KubeObject } from '../types.ts';
import { duplicateCause, forbiddenCause, invalidCause, requiredCause } from './field-errors.ts';
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

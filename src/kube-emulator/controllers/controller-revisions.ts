// ControllerRevisions of StatefulSets (pkg/controller/statefulset/stateful_set_utils.go and
// pkg/controller/history): one per distinct pod template, named `<set>-<hash>` (the value of the
// pods' `controller-revision-hash` label), labelled with the template's labels and
// `controller.kubernetes.io/hash`, annotated with the set's annotations, controlled by the set;
// `data` is the strategic merge patch that puts the template back
// (`{"spec":{"template":{…,"$patch":"replace"}}}`, what `kubectl rollout undo` applies) and
// `revision` counts up; a template that comes back reuses its revision object with the next
// number; revisions beyond `revisionHistoryLimit` that no pod uses are deleted.
import { clone, isObject } from '../json.ts';
import { kindOf } from '../kinds.ts';
import { controllerOf, templateOf } from './owned-pods.ts';
import type { ResourceApi } from '../resource-api.ts';
import { canonicalJson, sameTemplate, templateHash } from './template-hash.ts';
import type { KubeObject } from '../types.ts';

export const controllerRevisions = kindOf('apps', 'controllerrevisions');
export const REVISION_HASH_LABEL = 'controller.kubernetes.io/hash';

const revisionNumber = (cr: KubeObject): number =>
  typeof cr.revision === 'number' ? cr.revision : 0;

/**
 * The patch a revision stores for a set's template, its keys sorted as Go's json.Marshal of a map
 * writes them (kubectl compares these bytes with the patch it makes of the set).
 */
function patchOf(set: KubeObject): Record<string, unknown> {
  const patch = { spec: { template: { ...clone(templateOf(set).template), $patch: 'replace' } } };
  return JSON.parse(canonicalJson(patch)) as Record<string, unknown>;
}

export class StatefulSetRevisions {
  readonly #api: ResourceApi;
  /** The revision found for a set at a generation (its template changes only with it), by uid. */
  readonly #known = new Map<string, { generation: number; name: string }>();

  constructor(api: ResourceApi) {
    this.#api = api;
  }

  /** The revisions a set controls, oldest revision first. */
  history(set: KubeObject): KubeObject[] {
    return this.#api.store
      .list(controllerRevisions.storage, set.metadata.namespace ?? '')
      .filter((cr) => controllerOf(cr)?.uid === set.metadata.uid)
      .sort((a, b) => revisionNumber(a) - revisionNumber(b));
  }

  /** The name of the revision of the set's current template, created or renumbered as needed. */
  sync(set: KubeObject): string {
    const namespace = set.metadata.namespace ?? '';
    const uid = set.metadata.uid ?? '';
    const generation = set.metadata.generation ?? 0;
    const known = this.#known.get(uid);
    if (
      known?.generation === generation &&
      this.#api.peek(controllerRevisions, namespace, known.name) !== undefined
    ) {
      return known.name;
    }
    const name = this.#find(set);
    this.#known.set(uid, { generation, name });
    return name;
  }

  #find(set: KubeObject): string {
    const namespace = set.metadata.namespace ?? '';
    const data = patchOf(set);
    const history = this.history(set);
    const latest = history.at(-1);
    const next = (latest === undefined ? 0 : revisionNumber(latest)) + 1;
    const equal = history.filter((cr) => sameTemplate(cr.data, data)).at(-1);
    if (equal !== undefined) {
      if (equal !== latest) {
        const bumped = clone(equal);
        bumped.revision = next;
        this.#api.write(controllerRevisions, bumped);
      }
      return equal.metadata.name ?? '';
    }
    for (let collisions = 0; ; collisions++) {
      const hash = templateHash(templateOf(set).template, 10, collisions);
      const name = `${set.metadata.name ?? ''}-${hash}`;
      const clash = this.#api.peek(controllerRevisions, namespace, name);
      if (
        clash !== undefined &&
        controllerOf(clash)?.uid === set.metadata.uid &&
        sameTemplate(clash.data, data)
      )
        return name;
      if (clash !== undefined) continue;
      this.#api.create(controllerRevisions, namespace, {
        metadata: {
          name,
          labels: { ...templateOf(set).labels, [REVISION_HASH_LABEL]: hash },
          ...(set.metadata.annotations === undefined
            ? {}
            : { annotations: { ...set.metadata.annotations } }),
          ownerReferences: [
            {
              apiVersion: 'apps/v1',
              kind: 'StatefulSet',
              name: set.metadata.name ?? '',
              uid: set.metadata.uid ?? '',
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        data,
        revision: next,
      });
      return name;
    }
  }

  /**
   * Deletes the oldest unused revisions beyond the set's revisionHistoryLimit (default 10);
   * `live` (the revisions in use) is asked for only when there are more than that.
   */
  truncate(set: KubeObject, live: () => ReadonlySet<string>): void {
    const spec = isObject(set.spec) ? set.spec : {};
    const limit = typeof spec.revisionHistoryLimit === 'number' ? spec.revisionHistoryLimit : 10;
    const history = this.history(set);
    if (history.length <= limit) return;
    const used = live();
    const unused = history.filter((cr) => !used.has(cr.metadata.name ?? ''));
    for (const cr of unused.slice(0, Math.max(0, unused.length - limit))) {
      this.#api.delete(controllerRevisions, cr.metadata.namespace ?? '', cr.metadata.name ?? '');
    }
  }
}

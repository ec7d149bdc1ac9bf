// The Kubernetes protobuf messages the emulator speaks (generated from proto/k8s), found by
// apiVersion and kind, and the Go facts about their fields that the .proto files do not carry.
import { readFileSync } from 'node:fs';
import { createRegistry, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { file_k8s_io_api_apps_v1_generated } from './gen/k8s.io/api/apps/v1/generated_pb.js';
import { file_k8s_io_api_authentication_v1_generated } from './gen/k8s.io/api/authentication/v1/generated_pb.js';
import { file_k8s_io_api_authorization_v1_generated } from './gen/k8s.io/api/authorization/v1/generated_pb.js';
import { file_k8s_io_api_autoscaling_v1_generated } from './gen/k8s.io/api/autoscaling/v1/generated_pb.js';
import { file_k8s_io_api_coordination_v1_generated } from './gen/k8s.io/api/coordination/v1/generated_pb.js';
import { file_k8s_io_api_core_v1_generated } from './gen/k8s.io/api/core/v1/generated_pb.js';
import { file_k8s_io_api_discovery_v1_generated } from './gen/k8s.io/api/discovery/v1/generated_pb.js';
import { file_k8s_io_api_events_v1_generated } from './gen/k8s.io/api/events/v1/generated_pb.js';
import { file_k8s_io_api_policy_v1_generated } from './gen/k8s.io/api/policy/v1/generated_pb.js';
import { file_k8s_io_api_rbac_v1_generated } from './gen/k8s.io/api/rbac/v1/generated_pb.js';
import { file_k8s_io_apimachinery_pkg_apis_meta_v1_generated } from './gen/k8s.io/apimachinery/pkg/apis/meta/v1/generated_pb.js';

/** Built on first use: a JSON-only emulator never pays for it. */
let built: ReturnType<typeof createRegistry> | undefined;
const registry = (): ReturnType<typeof createRegistry> =>
  (built ??= createRegistry(
    file_k8s_io_api_core_v1_generated,
    file_k8s_io_api_apps_v1_generated,
    file_k8s_io_api_autoscaling_v1_generated,
    file_k8s_io_api_coordination_v1_generated,
    file_k8s_io_api_events_v1_generated,
    file_k8s_io_api_rbac_v1_generated,
    file_k8s_io_api_authentication_v1_generated,
    file_k8s_io_api_authorization_v1_generated,
    file_k8s_io_api_policy_v1_generated,
    file_k8s_io_api_discovery_v1_generated,
    file_k8s_io_apimachinery_pkg_apis_meta_v1_generated,
  ));

/** What Go's types say about one proto field (scripts/k8s-proto-import.ts). */
export interface GoField {
  /** The JSON name (the proto name except for a few fields, e.g. `uID` → `uid`). */
  readonly json: string;
  /** A Go pointer: written to protobuf and JSON only when set, zero values included. */
  readonly pointer: boolean;
  /** `omitempty`: a zero non-pointer value is left out of JSON. */
  readonly omitempty: boolean;
  /** The field is not in JSON at all (`json:"-"`, the raw bytes of RawExtension). */
  readonly hidden: boolean;
  /** An embedded struct (`json:",inline"`): its fields sit in the parent's JSON object. */
  readonly inline: boolean;
}

interface GoFacts {
  source: Record<string, string>;
  wrappers: string[];
  fields: Record<string, Record<string, string>>;
}

let facts: GoFacts | undefined;
function goFacts(): GoFacts {
  facts ??= JSON.parse(readFileSync(new URL('go-fields.json', import.meta.url), 'utf8')) as GoFacts;
  return facts;
}

let wrappers: ReadonlySet<string> | undefined;
/** Whether a message stands for a named Go slice (`type ExtraValue []string`): a bare JSON array. */
export function isWrapper(typeName: string): boolean {
  wrappers ??= new Set(goFacts().wrappers);
  return wrappers.has(typeName);
}

const factCache = new Map<DescField, GoField>();

export function goField(message: DescMessage, field: DescField): GoField {
  let fact = factCache.get(field);
  if (fact === undefined) {
    const flags = goFacts().fields[message.typeName]?.[field.name];
    const json = flags === undefined ? undefined : /j:(.+)$/.exec(flags)?.[1];
    fact = {
      json: json === undefined || json === '-' ? field.name : json,
      pointer: flags?.includes('p') ?? false,
      // A message the Go facts do not know: every field optional.
      omitempty: flags === undefined || /^p?o/.test(flags),
      hidden: json === '-',
      inline: flags !== undefined && /^p?o?i/.test(flags),
    };
    factCache.set(field, fact);
  }
  return fact;
}

/** The proto package of an API group version: `apps/v1` → `k8s.io.api.apps.v1`. */
function protoPackage(apiVersion: string): string {
  if (apiVersion === 'meta.k8s.io/v1') return 'k8s.io.apimachinery.pkg.apis.meta.v1';
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return `k8s.io.api.core.${apiVersion}`;
  const group = apiVersion.slice(0, slash);
  const short = group.split('.')[0] ?? group;
  return `k8s.io.api.${short}.${apiVersion.slice(slash + 1)}`;
}

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
/** Kinds every group version serves from meta/v1 (as the apiserver's scheme registers them). */
const metaKinds = new Set([
  'Status',
  'DeleteOptions',
  'WatchEvent',
  'List',
  // metav1.AddToGroupVersion registers the options in every group version; the legacy group
  // serves APIGroup and APIVersions (kubernetes/api testdata/HEAD: core.v1.ListOptions, …).
  'ListOptions',
  'GetOptions',
  'CreateOptions',
  'UpdateOptions',
  'PatchOptions',
  'APIGroup',
  'APIVersions',
  'APIGroupList',
  'APIResourceList',
]);

/** The message of `kind` in `apiVersion`, or undefined when it has no protobuf form here. */
export function messageFor(apiVersion: string, kind: string): DescMessage | undefined {
  if (metaKinds.has(kind)) return registry().getMessage(`${META}.${kind}`);
  return registry().getMessage(`${protoPackage(apiVersion)}.${kind}`);
}

/** A message by its full name (`k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent`). */
export function messageNamed(typeName: string): DescMessage {
  const message = registry().getMessage(typeName);
  if (message === undefined) throw new Error(`no protobuf message ${typeName}`);
  return message;
}

// Imports the Kubernetes API `.proto` files the emulator serves, and the Go facts the `.proto`
// files do not carry, from git clones of kubernetes/api and kubernetes/apimachinery at one tag:
//   npx node scripts/k8s-proto-import.ts --api <git dir> --apimachinery <git dir> --tag v0.32.4
// Writes proto/k8s/k8s.io/... (the upstream generated.proto files, unchanged) and
// src/kube-emulator/protobuf/go-fields.json: per message, per proto field, whether the Go field
// is a pointer (`p`), whether its json tag has `omitempty` (`o`) or `inline` (`i`: the embedded
// struct's fields sit in the parent's JSON object), its JSON name when it differs, plus the named-slice wrapper
// messages (`type ExtraValue []string`) whose JSON form is a bare array. The JSON <-> protobuf
// codec needs both: Go's encoder always writes non-pointer fields, and its JSON encoder omits
// zero values only under omitempty (docs/adr/0010-kubernetes-protobuf-and-schemas.md).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    api: { type: 'string' },
    apimachinery: { type: 'string' },
    tag: { type: 'string', default: 'v0.32.4' },
  },
});
if (values.api === undefined || values.apimachinery === undefined) {
  console.error('usage: k8s-proto-import.ts --api <git dir> --apimachinery <git dir> [--tag T]');
  process.exit(2);
}
const tag = values.tag;

/** Proto package folders, by the repository that holds them. */
const packages: { repo: string; module: string; dir: string }[] = [
  ...[
    'core/v1',
    'apps/v1',
    'autoscaling/v1',
    'coordination/v1',
    'events/v1',
    'rbac/v1',
    'authentication/v1',
    'authorization/v1',
    'policy/v1',
    'discovery/v1',
  ].map((dir) => ({ repo: values.api ?? '', module: 'k8s.io/api', dir })),
  ...[
    'pkg/api/resource',
    'pkg/apis/meta/v1',
    'pkg/runtime',
    'pkg/runtime/schema',
    'pkg/util/intstr',
  ].map((dir) => ({ repo: values.apimachinery ?? '', module: 'k8s.io/apimachinery', dir })),
];

function git(repo: string, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', repo, ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
}

const fields: Record<string, Record<string, string>> = {};
const wrappers: string[] = [];
/** Structs that embed TypeMeta: objects with `apiVersion` and `kind` in JSON (not in protobuf). */
const typeMeta: string[] = [];

/** Reads Go struct definitions: field name, Go type, json and protobuf tags. */
function readGoFacts(source: string, protoPackage: string): void {
  const lines = source.split('\n');
  let message: string | undefined;
  for (const line of lines) {
    const start = /^type (\w+) struct \{/.exec(line);
    if (start?.[1] !== undefined) {
      message = start[1];
      continue;
    }
    const named = /^type (\w+) \[\](\w+)\s*$/.exec(line);
    if (named?.[1] !== undefined) wrappers.push(`${protoPackage}.${named[1]}`);
    if (message === undefined) continue;
    if (line.startsWith('}')) {
      message = undefined;
      continue;
    }
    if (/^\s+(?:metav1\.)?TypeMeta\s+`json:",inline"/.test(line))
      typeMeta.push(`${protoPackage}.${message}`);
    const field = /^\s+(?:\w+\s+)?(\S+)\s+`(.*)`/.exec(line);
    if (field?.[1] === undefined || field[2] === undefined) continue;
    const goType = field[1];
    const tags = field[2];
    // An embedded struct's tag may carry no name (EphemeralContainer's
    // `EphemeralContainerCommon \`json:",inline" protobuf:"bytes,1,req"\``): go-to-protobuf
    // names its field after the type, first letter lowered.
    const embedded = /^\s+\*?\w+\s+`/.test(line) && /protobuf:"/.test(tags);
    const protobuf =
      /protobuf:"[^"]*name=(\w+)/.exec(tags)?.[1] ??
      (embedded ? `${goType.charAt(0).toLowerCase()}${goType.slice(1)}` : undefined);
    if (protobuf === undefined) continue;
    const json = /json:"([^"]*)"/.exec(tags)?.[1] ?? '';
    const [jsonName = '', ...options] = json.split(',');
    let flags = '';
    if (goType.startsWith('*')) flags += 'p';
    if (options.includes('omitempty')) flags += 'o';
    if (options.includes('inline')) flags += 'i';
    if (jsonName !== protobuf && !options.includes('inline')) flags += `j:${jsonName}`;
    const key = `${protoPackage}.${message}`;
    fields[key] ??= {};
    fields[key][protobuf] = flags;
  }
}

const root = 'proto/k8s';
for (const { repo, module, dir } of packages) {
  const proto = git(repo, 'show', `${tag}:${dir}/generated.proto`);
  const target = join(root, module, dir, 'generated.proto');
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, proto);
  const protoPackage = /^package ([\w.]+);/m.exec(proto)?.[1] ?? '';
  const files = git(repo, 'ls-tree', '--name-only', `${tag}:${dir}`)
    .split('\n')
    .filter(
      (f) =>
        f.endsWith('.go') &&
        !f.endsWith('_test.go') &&
        !f.startsWith('zz_generated') &&
        !f.startsWith('generated.'),
    );
  for (const file of files) readGoFacts(git(repo, 'show', `${tag}:${dir}/${file}`), protoPackage);
}

const commit = (repo: string): string => git(repo, 'rev-list', '-n', '1', tag).trim();
const out = {
  source: {
    tag,
    'k8s.io/api': commit(values.api),
    'k8s.io/apimachinery': commit(values.apimachinery),
  },
  wrappers: wrappers.sort(),
  typeMeta: typeMeta.sort(),
  fields: Object.fromEntries(Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : 1))),
};
writeFileSync('src/kube-emulator/protobuf/go-fields.json', `${JSON.stringify(out)}\n`);
writeFileSync(
  join(root, 'SOURCE.md'),
  `# Kubernetes API definitions (imported, do not edit)\n\n` +
    `The \`generated.proto\` files under \`k8s.io/\` are kubernetes/api and kubernetes/apimachinery at\n` +
    `tag \`${tag}\` (api ${out.source['k8s.io/api']}, apimachinery ${out.source['k8s.io/apimachinery']}),\n` +
    `unchanged (Apache License 2.0, The Kubernetes Authors). \`npm run gen\` generates\n` +
    `\`src/kube-emulator/protobuf/gen/\` from them. Re-import with\n` +
    `\`npx node scripts/k8s-proto-import.ts --api <git dir> --apimachinery <git dir> --tag <tag>\`,\n` +
    `which also rewrites \`src/kube-emulator/protobuf/go-fields.json\` from the Go types of the same tag.\n`,
);
console.log(
  `imported ${packages.length} packages at ${tag}; ${Object.keys(fields).length} messages`,
);

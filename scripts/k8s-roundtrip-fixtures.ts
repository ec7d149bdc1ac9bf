// Packs kubernetes/api's protobuf round-trip fixtures (testdata/HEAD/<group>.<version>.<Kind>.json
// and .pb) of the tag proto/k8s was imported from, for the groups the emulator has messages of,
// into test/kube-emulator/fixtures/k8s-roundtrip.json.gz: { "<file base>": { json, pb (base64) } }.
// test/kube-emulator/protobuf-roundtrip.unit.test.ts checks decode(pb) == json and
// encode(json) == pb byte for byte against it.
//
// Usage: npx node scripts/k8s-roundtrip-fixtures.ts --api <kubernetes/api git dir> [--tag v0.32.4]
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const args = process.argv.slice(2);
const api = args[args.indexOf('--api') + 1];
const tag = args.includes('--tag') ? args[args.indexOf('--tag') + 1] : 'v0.32.4';
if (!args.includes('--api') || api === undefined || tag === undefined) {
  console.error('usage: k8s-roundtrip-fixtures.ts --api <git dir> [--tag T]');
  process.exit(2);
}
const groups =
  /^testdata\/HEAD\/(core\.v1|apps\.v1|authentication\.k8s\.io\.v1|authorization\.k8s\.io\.v1|autoscaling\.v1|coordination\.k8s\.io\.v1|discovery\.k8s\.io\.v1|events\.k8s\.io\.v1|policy\.v1|rbac\.authorization\.k8s\.io\.v1)\.[A-Za-z]+\.pb$/;
const git = (...rest: string[]): Buffer =>
  execFileSync('git', ['-C', api, ...rest], { maxBuffer: 64 * 1024 * 1024 });
const bundle: Record<string, { json: unknown; pb: string }> = {};
for (const path of git('ls-tree', '-r', '--name-only', tag, 'testdata/HEAD')
  .toString('utf8')
  .split('\n')
  .filter((p) => groups.test(p))) {
  const base = path.slice('testdata/HEAD/'.length, -'.pb'.length);
  bundle[base] = {
    json: JSON.parse(git('show', `${tag}:testdata/HEAD/${base}.json`).toString('utf8')),
    pb: git('show', `${tag}:${path}`).toString('base64'),
  };
}
const out = 'test/kube-emulator/fixtures/k8s-roundtrip.json.gz';
writeFileSync(out, gzipSync(JSON.stringify({ tag, fixtures: bundle }), { level: 9 }));
console.log(`${Object.keys(bundle).length} fixtures of kubernetes/api ${tag} → ${out}`);

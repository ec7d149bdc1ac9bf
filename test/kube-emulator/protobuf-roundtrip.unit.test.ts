// Kubernetes' own protobuf round-trip fixtures (kubernetes/api testdata/HEAD at v0.32.4, the tag
// proto/k8s comes from; packed by scripts/k8s-roundtrip-fixtures.ts) for every kind the
// emulator has a protobuf message of: decode(.pb) equals the .json, and encode(.json) equals the
// .pb byte for byte. Go wrote both files, so this checks the codec against Go, kind by kind.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeObject, encodeObject } from '../../src/kube-emulator/protobuf/envelope.ts';
import { messageFor } from '../../src/kube-emulator/protobuf/registry.ts';

const { tag, fixtures } = JSON.parse(
  gunzipSync(readFileSync(new URL('fixtures/k8s-roundtrip.json.gz', import.meta.url))).toString(
    'utf8',
  ),
) as { tag: string; fixtures: Record<string, { json: Record<string, unknown>; pb: string }> };

/** `apps.v1.StatefulSet` → apps/v1 StatefulSet; `core.v1.Pod` → v1 Pod. */
function typeOf(base: string): { apiVersion: string; kind: string } {
  const parts = base.split('.');
  const kind = parts.at(-1) ?? '';
  const version = parts.at(-2) ?? '';
  const group = parts.slice(0, -2).join('.');
  return { apiVersion: group === 'core' ? version : `${group}/${version}`, kind };
}

describe(`kubernetes/api ${tag} round-trip fixtures`, () => {
  it('covers every kind of the groups the emulator speaks', () => {
    expect(Object.keys(fixtures).length).toBe(60);
    for (const base of Object.keys(fixtures)) {
      const { apiVersion, kind } = typeOf(base);
      expect(messageFor(apiVersion, kind), base).toBeDefined();
    }
  });

  it.each(Object.keys(fixtures))('%s: decode(pb) is the JSON, encode(JSON) is the pb', (base) => {
    const fixture = fixtures[base];
    if (fixture === undefined) throw new Error(base);
    const type = typeOf(base);
    const pb = Buffer.from(fixture.pb, 'base64');
    expect(decodeObject(pb, type)).toEqual(fixture.json);
    const encoded = encodeObject(fixture.json, fixture.json.kind === undefined ? type : undefined);
    expect(Buffer.from(encoded).toString('hex')).toBe(pb.toString('hex'));
  });
});

// JSON Patch, merge patch and strategic merge patch (with kubectl's directives).
import { describe, expect, it } from 'vitest';
import { applyJsonPatch } from '../../src/kube-emulator/patch/json-patch.ts';
import { applyMergePatch } from '../../src/kube-emulator/patch/merge-patch.ts';
import { applyStrategicMergePatch } from '../../src/kube-emulator/patch/strategic-merge-patch.ts';
import { ApiError } from '../../src/kube-emulator/status-errors.ts';

describe('JSON Patch', () => {
  const doc = { spec: { replicas: 1, list: ['a', 'b'] } };
  it('applies add, remove, replace, move, copy and test', () => {
    const patched = applyJsonPatch(doc, [
      { op: 'test', path: '/spec/replicas', value: 1 },
      { op: 'replace', path: '/spec/replicas', value: 3 },
      { op: 'add', path: '/spec/list/-', value: 'c' },
      { op: 'remove', path: '/spec/list/0' },
      { op: 'copy', from: '/spec/replicas', path: '/spec/copy' },
      { op: 'move', from: '/spec/copy', path: '/moved' },
    ]);
    expect(patched).toEqual({ spec: { replicas: 3, list: ['b', 'c'] }, moved: 3 });
    expect(doc.spec.replicas).toBe(1);
  });

  it('rejects an object body with 400, as a real apiserver does', () => {
    let error: unknown;
    try {
      applyJsonPatch(doc, { spec: { replicas: 5 } });
    } catch (caught: unknown) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe(400);
  });

  it('fails a test operation with 422', () => {
    expect(() => applyJsonPatch(doc, [{ op: 'test', path: '/spec/replicas', value: 2 }])).toThrow(
      /test failed/,
    );
  });
});

describe('merge patch', () => {
  it('merges objects, deletes on null and replaces lists', () => {
    expect(
      applyMergePatch({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { b: null, d: 3 }, l: [3] }),
    ).toEqual({ a: { c: 2, d: 3 }, l: [3] });
  });
});

describe('strategic merge patch', () => {
  const sts = {
    metadata: { finalizers: ['a'] },
    spec: {
      template: {
        spec: {
          containers: [
            {
              name: 'c',
              image: 'v1',
              env: [{ name: 'A', value: '1' }],
              ports: [{ containerPort: 80, name: 'http' }],
            },
            { name: 'side', image: 's1' },
          ],
          tolerations: [{ key: 'x' }],
        },
      },
    },
  };

  it('merges containers by name, drops one with $patch: delete and follows $setElementOrder, leaving no directive behind', () => {
    const patched = applyStrategicMergePatch(sts, {
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'c' }],
            containers: [
              { name: 'c', image: 'v2', env: [{ name: 'B', value: '2' }] },
              { $patch: 'delete', name: 'side' },
            ],
          },
        },
      },
    });
    expect(patched).toEqual({
      metadata: { finalizers: ['a'] },
      spec: {
        template: {
          spec: {
            containers: [
              {
                name: 'c',
                image: 'v2',
                env: [
                  { name: 'A', value: '1' },
                  { name: 'B', value: '2' },
                ],
                ports: [{ containerPort: 80, name: 'http' }],
              },
            ],
            tolerations: [{ key: 'x' }],
          },
        },
      },
    });
    expect(JSON.stringify(patched)).not.toContain('$');
  });

  it('replaces lists without a merge key, unions finalizers and honours $deleteFromPrimitiveList and $retainKeys', () => {
    const patched = applyStrategicMergePatch(sts, {
      metadata: { finalizers: ['b'], '$deleteFromPrimitiveList/finalizers': ['a'] },
      spec: {
        template: {
          spec: { tolerations: [{ key: 'y' }], $retainKeys: ['containers', 'tolerations'] },
        },
      },
    }) as typeof sts;
    expect(patched.metadata.finalizers).toEqual(['b']);
    expect(patched.spec.template.spec.tolerations).toEqual([{ key: 'y' }]);
  });

  it('replaces a map with $patch: replace', () => {
    const patched = applyStrategicMergePatch(
      { a: { x: 1, y: 2 } },
      { a: { $patch: 'replace', z: 3 } },
    );
    expect(patched).toEqual({ a: { z: 3 } });
  });
});

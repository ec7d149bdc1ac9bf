// The rules of ephemeral containers the clients do not reach easily (kubectl-debug.test.ts drives
// the common ones with kubectl and the Python client): pkg/apis/core/validation/validation.go
// (v1.32) validateEphemeralContainers and ValidatePodEphemeralContainersUpdate, and
// pkg/registry/core/pod/strategy.go dropNonEphemeralContainerUpdates.
import { describe, expect, it } from 'vitest';
import {
  ephemeralContainerCauses,
  ephemeralContainersUpdateCauses,
  keepOnlyEphemeralContainers,
} from '../../src/kube-emulator/admission/pod-rules.ts';
import type { KubeObject } from '../../src/kube-emulator/types.ts';

const spec = (ephemeralContainers: unknown[]) => ({
  containers: [{ name: 'main', image: 'echo' }],
  initContainers: [{ name: 'init', image: 'echo' }],
  ephemeralContainers,
});

describe('ephemeral container rules', () => {
  it('takes a target among regular and init containers, not among ephemeral ones', () => {
    expect(
      ephemeralContainerCauses(
        spec([
          { name: 'a', image: 'b', targetContainerName: 'init' },
          { name: 'c', image: 'b', targetContainerName: 'a' },
        ]),
        'spec',
      ),
    ).toEqual([
      {
        reason: 'FieldValueNotFound',
        field: 'spec.ephemeralContainers[1].targetContainerName',
        message: 'Not found: "a"',
      },
    ]);
  });

  it('refuses a name twice among ephemeral containers, an empty image, probes and subPath', () => {
    const causes = ephemeralContainerCauses(
      spec([
        { name: 'a', image: 'b' },
        {
          name: 'a',
          image: '',
          readinessProbe: { exec: { command: ['true'] } },
          volumeMounts: [{ name: 'v', mountPath: '/m', subPath: 'x' }],
          // Allowed fields: nothing to say about them.
          env: [{ name: 'X', value: '1' }],
          stdin: true,
          tty: true,
        },
      ]),
      'spec',
    );
    expect(causes.map((c) => `${c.field}: ${c.message}`)).toEqual([
      'spec.ephemeralContainers[1].image: Required value',
      'spec.ephemeralContainers[1].name: Duplicate value: "a"',
      'spec.ephemeralContainers[1].readinessProbe: Forbidden: cannot be set for an Ephemeral Container',
      'spec.ephemeralContainers[1].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container',
    ]);
  });

  it('keeps only spec.ephemeralContainers of an update: spec, status and metadata are the stored ones', () => {
    const stored: KubeObject = {
      metadata: { name: 'p', labels: { a: '1' } },
      spec: { containers: [{ name: 'main', image: 'echo' }] },
      status: { phase: 'Running' },
    };
    const next = keepOnlyEphemeralContainers(stored, {
      metadata: { name: 'p', labels: { b: '2' } },
      spec: {
        containers: [{ name: 'main', image: 'other' }],
        ephemeralContainers: [{ name: 'd', image: 'busybox' }],
      },
      status: { phase: 'Failed' },
    });
    expect(next).toEqual({
      ...stored,
      spec: {
        containers: [{ name: 'main', image: 'echo' }],
        ephemeralContainers: [{ name: 'd', image: 'busybox' }],
      },
    });
    expect(stored.spec).not.toHaveProperty('ephemeralContainers');
  });

  it('refuses ephemeral containers on a static (mirror) pod, and finds a change whatever the order', () => {
    const old: KubeObject = {
      metadata: { name: 'p', annotations: { 'kubernetes.io/config.mirror': 'x' } },
      spec: spec([]),
    };
    expect(ephemeralContainersUpdateCauses({ ...old, spec: spec([{ name: 'd' }]) }, old)).toEqual([
      {
        reason: 'FieldValueForbidden',
        field: '',
        message: 'Forbidden: static pods do not support ephemeral containers',
      },
    ]);
    const before: KubeObject = {
      metadata: { name: 'p' },
      spec: spec([
        { name: 'a', image: 'x' },
        { name: 'b', image: 'x' },
      ]),
    };
    const reordered = spec([
      { name: 'b', image: 'x' },
      { name: 'a', image: 'x' },
      { name: 'c', image: 'x' },
    ]);
    expect(ephemeralContainersUpdateCauses({ ...before, spec: reordered }, before)).toEqual([]);
    const changed = spec([
      { name: 'b', image: 'x', tty: true },
      { name: 'a', image: 'x' },
    ]);
    expect(
      ephemeralContainersUpdateCauses({ ...before, spec: changed }, before).map((c) => c.field),
    ).toEqual(['spec.ephemeralContainers[b]']);
  });
});

// The JSON <-> Kubernetes protobuf codec: JSON → protobuf → JSON is identity for an object of
// every kind the emulator serves (in the form the apiserver writes JSON: omitempty zero values
// left out), the special JSON forms of apimachinery's types, the envelope and watch frames.
// Bytes are checked against Go's protobuf in test/conformance/protobuf-wire.test.ts (buf).
import { describe, expect, it } from 'vitest';
import { kinds, apiVersionOf } from '../../src/kube-emulator/kinds.ts';
import { decodeMessage, encodeMessage } from '../../src/kube-emulator/protobuf/codec.ts';
import {
  decodeObject,
  encodeObject,
  readWatchFrames,
  watchFrame,
} from '../../src/kube-emulator/protobuf/envelope.ts';
import { formatDuration, parseDuration } from '../../src/kube-emulator/protobuf/go-duration.ts';
import { messageFor } from '../../src/kube-emulator/protobuf/registry.ts';
import { servedSamples } from './fixtures/served-samples.ts';

describe('protobuf codec', () => {
  it('has a sample of every served kind, and a protobuf message for each', () => {
    for (const info of kinds) {
      const sample = servedSamples[`${apiVersionOf(info)}/${info.kind}`];
      expect(sample, `${apiVersionOf(info)} ${info.kind}`).toBeDefined();
      expect(messageFor(apiVersionOf(info), info.kind)).toBeDefined();
    }
  });

  it.each(Object.entries(servedSamples))(
    'round-trips %s: JSON → protobuf → JSON is identity',
    (_, sample) => {
      expect(decodeObject(encodeObject(sample))).toEqual(sample);
    },
  );

  it('keeps a pointer field set to zero (replicas: 0) and drops an omitempty non-pointer zero (hostPort: 0)', () => {
    const message = messageFor('apps/v1', 'StatefulSet');
    if (message === undefined) throw new Error('no StatefulSet message');
    const decoded = decodeMessage(
      message,
      encodeMessage(message, {
        metadata: { name: 'a' },
        spec: {
          replicas: 0,
          template: {
            spec: { containers: [{ name: 'c', ports: [{ containerPort: 80, hostPort: 0 }] }] },
          },
        },
      }),
    );
    const spec = decoded.spec as {
      replicas: number;
      template: { spec: { containers: { ports: unknown[] }[] } };
    };
    expect(spec.replicas).toBe(0);
    expect(spec.template.spec.containers[0]?.ports).toEqual([{ containerPort: 80 }]);
    // Time is a struct: the zero value is written as JSON null, as encoding/json does.
    expect((decoded.metadata as Record<string, unknown>).creationTimestamp).toBeNull();
  });

  it('writes a non-pointer scalar even when the JSON leaves it out, as Go does (ObjectMeta.generateName)', () => {
    const message = messageFor('v1', 'ConfigMap');
    if (message === undefined) throw new Error('no ConfigMap message');
    const bytes = Buffer.from(encodeMessage(message, { metadata: { name: 'a' } }));
    // metadata (1) { name (1) "a", generateName (2) "", namespace (3) "", selfLink (4) "", uid (5) "",
    // resourceVersion (6) "", generation (7) 0, creationTimestamp (8) {} }
    expect(bytes.toString('hex')).toBe('0a110a016112001a0022002a00320038004200');
  });

  it('maps IntOrString, Quantity, MicroTime, byte fields and RawExtension to their JSON forms', () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', creationTimestamp: '2026-12-01T09:00:00Z' },
      spec: {
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: '25%' } },
        template: {
          metadata: { creationTimestamp: null },
          spec: {
            containers: [
              { name: 'c', image: 'i', resources: { limits: { cpu: '500m', memory: '1Gi' } } },
            ],
          },
        },
      },
      status: {},
    };
    const back = decodeObject(encodeObject(deployment)) as typeof deployment;
    expect(back.spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 1, maxSurge: '25%' });
    expect(back.spec.template.spec.containers[0]?.resources.limits).toEqual({
      cpu: '500m',
      memory: '1Gi',
    });
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'l', creationTimestamp: '2026-12-01T09:00:00Z' },
      spec: {
        holderIdentity: 'a',
        renewTime: '2026-12-01T09:00:01.123456Z',
        leaseDurationSeconds: 15,
      },
    };
    expect(decodeObject(encodeObject(lease))).toEqual(lease);
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', creationTimestamp: null },
      data: { k: Buffer.from([0, 1, 255]).toString('base64') },
    };
    expect(decodeObject(encodeObject(secret))).toEqual(secret);
  });

  it('inlines EphemeralContainerCommon in EphemeralContainer, as Go embeds it (a pod after kubectl debug)', () => {
    // generated.proto (k8s.io/api v0.32.4): EphemeralContainer { EphemeralContainerCommon
    // ephemeralContainerCommon = 1; string targetContainerName = 2; }, and
    // EphemeralContainerCommon { name = 1; image = 2; command = 3 }; its JSON form is flat.
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', creationTimestamp: null },
      spec: {
        containers: [{ name: 'main', image: 'echo', resources: {} }],
        ephemeralContainers: [
          {
            name: 'debugger',
            image: 'busybox',
            command: ['sh', '-c', 'echo hi'],
            resources: {},
            targetContainerName: 'main',
          },
        ],
      },
      status: {
        ephemeralContainerStatuses: [
          {
            name: 'debugger',
            state: {
              terminated: { exitCode: 0, reason: 'Completed', startedAt: null, finishedAt: null },
            },
            lastState: {},
            ready: false,
            restartCount: 0,
            image: 'busybox',
            imageID: '',
          },
        ],
      },
    };
    const bytes = encodeObject(pod);
    expect(decodeObject(bytes)).toEqual(pod);
    // The entry's bytes: field 1 (the common part, a nested message holding name = 1 and
    // image = 2), then targetContainerName = 2 — not name at the top level.
    const entry = Buffer.concat([
      Buffer.from([0x0a, 0x08]),
      Buffer.from('debugger'),
      Buffer.from([0x12, 0x07]),
      Buffer.from('busybox'),
    ]);
    const target = Buffer.concat([Buffer.from([0x12, 0x04]), Buffer.from('main')]);
    expect(Buffer.from(bytes).indexOf(entry)).toBeGreaterThan(0);
    const at = Buffer.from(bytes).indexOf(entry);
    expect(bytes[at - 2]).toBe(0x0a); // ephemeralContainerCommon = 1, length-delimited
    expect(Buffer.from(bytes).indexOf(target, at)).toBeGreaterThan(at);
  });

  it('frames watch events with a 4-byte length and an enveloped object', () => {
    const object = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', creationTimestamp: '2026-12-01T09:00:00Z' },
      data: { x: 'y' },
    };
    const frame = watchFrame('ADDED', object);
    expect(new DataView(frame.buffer).getUint32(0)).toBe(frame.length - 4);
    const both = Buffer.concat([frame, watchFrame('DELETED', object)]);
    expect(readWatchFrames(both)).toEqual([
      { type: 'ADDED', object },
      { type: 'DELETED', object },
    ]);
  });

  it('refuses a body without the k8s\\0 prefix and a kind it does not know', () => {
    expect(() => decodeObject(Buffer.from('{"kind":"Secret"}'))).toThrow(/expected prefix/);
    const alien = Buffer.from(
      encodeObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'a' } }),
    );
    const renamed = Buffer.from(alien.toString('latin1').replace('Secret', 'Secreq'), 'latin1');
    expect(() => decodeObject(renamed)).toThrow(/no kind "Secreq" is registered for version "v1"/);
  });

  it("formats and parses Go durations like time.Duration's String and ParseDuration", () => {
    for (const [text, nanos] of [
      ['0s', 0],
      ['1h0m0s', 3600e9],
      ['1m30s', 90e9],
      ['1.5s', 1.5e9],
      ['500ms', 500e6],
      ['2µs', 2000],
      ['-3s', -3e9],
    ] as const) {
      expect(formatDuration(nanos)).toBe(text);
      expect(parseDuration(text)).toBe(nanos);
    }
    expect(parseDuration('1h30m')).toBe(5400e9);
  });
});

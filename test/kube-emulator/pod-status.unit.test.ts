// The emulator's kubelet writes a pod's times as a real kubelet's pod status reaches clients:
// metav1.Time marshals to RFC 3339 in whole seconds (apimachinery pkg/apis/meta/v1/time.go,
// MarshalJSON: `t.UTC().AppendFormat(buf, time.RFC3339)`), so a container that started at
// 10:30:21.900 reads `10:30:21Z`. The manager's stale-key rule (docs/adr/0022) relies on it.
import { describe, expect, it } from 'vitest';
import { podStatus } from '../../src/kube-emulator/kubelets/pod-status.ts';

const STARTED = Date.parse('2026-12-02T10:30:21.900Z');
const POD = {
  metadata: { name: 'validator-6', namespace: 'devnet', uid: 'u' },
  spec: { containers: [{ name: 'node', image: 'localnet-node:dev' }] },
};

describe('the pod status the emulator writes', () => {
  it("truncates the container's running start and the pod's start to the second", () => {
    const status = podStatus(POD, {
      phase: 'Running',
      scheduled: true,
      containers: [
        {
          name: 'node',
          state: { type: 'running', startedAt: STARTED },
          ready: true,
          restartCount: 0,
        },
      ],
      startTime: STARTED - 500,
      now: STARTED + 100,
    }) as {
      startTime: string;
      containerStatuses: { state: { running: { startedAt: string } } }[];
    };
    expect(status.containerStatuses[0]?.state.running.startedAt).toBe('2026-12-02T10:30:21Z');
    expect(status.startTime).toBe('2026-12-02T10:30:21Z');
  });
});

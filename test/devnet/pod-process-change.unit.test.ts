// Which pod events make the devnet scan /proc for its processes again (podProcessesMayChange): a
// pod added or deleted, a pod being deleted (its preStop hooks run), a container started, exited
// or restarted — not the manager's annotations nor a readiness flip.
import { describe, expect, it } from 'vitest';
import { podProcessesMayChange } from '../../src/devnet/process-record.ts';

function pod(
  fields: {
    state?: object;
    restartCount?: number;
    ready?: boolean;
    deleting?: boolean;
    annotations?: Record<string, string>;
  } = {},
) {
  return {
    metadata: {
      name: 'validator-0',
      annotations: fields.annotations ?? {},
      ...(fields.deleting === true ? { deletionTimestamp: '2026-12-02T00:00:00Z' } : {}),
    },
    status: {
      conditions: [{ type: 'Ready', status: fields.ready === true ? 'True' : 'False' }],
      containerStatuses: [
        {
          name: 'node',
          ready: fields.ready ?? false,
          restartCount: fields.restartCount ?? 0,
          state: fields.state ?? { running: { startedAt: '2026-12-02T00:00:00Z' } },
        },
      ],
    },
  };
}

const modified = (previous: object, object: object) => ({ type: 'MODIFIED', previous, object });

describe('podProcessesMayChange', () => {
  it('is true when a pod comes or goes', () => {
    expect(podProcessesMayChange({ type: 'ADDED', previous: undefined, object: pod() })).toBe(true);
    expect(podProcessesMayChange({ type: 'DELETED', previous: pod(), object: pod() })).toBe(true);
  });

  it('is true when a container starts, exits or restarts, or the pod is being deleted', () => {
    const waiting = pod({ state: { waiting: { reason: 'ContainerCreating' } } });
    expect(podProcessesMayChange(modified(waiting, pod()))).toBe(true);
    expect(
      podProcessesMayChange(modified(pod(), pod({ state: { terminated: { exitCode: 1 } } }))),
    ).toBe(true);
    expect(podProcessesMayChange(modified(pod(), pod({ restartCount: 1 })))).toBe(true);
    expect(podProcessesMayChange(modified(pod(), pod({ deleting: true })))).toBe(true);
  });

  it('is false for an annotation or a readiness flip', () => {
    expect(
      podProcessesMayChange(
        modified(pod(), pod({ annotations: { 'cluster-manager.dev/draining': 'true' } })),
      ),
    ).toBe(false);
    expect(podProcessesMayChange(modified(pod(), pod({ ready: true })))).toBe(false);
  });
});

// Events through both APIs (the apiserver's conversion), and the Events the emulator's own
// scheduler, kubelet and controllers write, aggregated as client-go's recorders aggregate them.
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../src/harness/wait.ts';
import { noKubectl } from '../support/kubectl-gate.ts';
import { startHarness, statefulSet } from './harness.ts';

describe('Events through core/v1 and events.k8s.io/v1', () => {
  it('reads an Event written through either API through the other, fields mapped as the apiserver maps them', async () => {
    const h = await startHarness({ kubelet: false });
    const first = new Date('2026-01-01T10:00:00Z');
    const last = new Date('2026-01-01T10:05:00Z');
    await h.core.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'legacy' },
        involvedObject: {
          kind: 'Pod',
          namespace: 'default',
          name: 'p',
          uid: 'u1',
          apiVersion: 'v1',
        },
        reason: 'Staked',
        message: 'validator 001 staked',
        type: 'Normal',
        source: { component: 'cluster-manager', host: 'cm-0' },
        firstTimestamp: first,
        lastTimestamp: last,
        count: 4,
        reportingComponent: 'cluster-manager',
        reportingInstance: 'cm-0',
      },
    });
    const seenNew = await h.events.readNamespacedEvent({ name: 'legacy', namespace: 'default' });
    expect(seenNew).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      regarding: { kind: 'Pod', name: 'p', uid: 'u1' },
      note: 'validator 001 staked',
      reason: 'Staked',
      type: 'Normal',
      reportingController: 'cluster-manager',
      reportingInstance: 'cm-0',
      deprecatedSource: { component: 'cluster-manager', host: 'cm-0' },
      deprecatedCount: 4,
    });
    expect(seenNew.deprecatedFirstTimestamp?.toISOString()).toBe(first.toISOString());
    expect(seenNew.deprecatedLastTimestamp?.toISOString()).toBe(last.toISOString());
    // Sent as raw JSON: client-node's V1MicroTime keeps only milliseconds.
    const created = await fetch(
      `${h.emulator.url}/apis/events.k8s.io/v1/namespaces/default/events`,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'events.k8s.io/v1',
          kind: 'Event',
          metadata: { name: 'modern' },
          regarding: {
            kind: 'StatefulSet',
            namespace: 'default',
            name: 'validator',
            apiVersion: 'apps/v1',
          },
          related: { kind: 'Pod', namespace: 'default', name: 'validator-0' },
          reason: 'ScaleSettled',
          note: 'six validators active',
          type: 'Normal',
          action: 'Scale',
          reportingController: 'cluster-manager',
          reportingInstance: 'cm-0',
          eventTime: '2026-01-01T10:59:00.000001Z',
          series: { count: 7, lastObservedTime: '2026-01-01T11:00:00.123456Z' },
        }),
      },
    );
    expect(created.status).toBe(201);
    const raw = (await (
      await fetch(`${h.emulator.url}/api/v1/namespaces/default/events/modern`)
    ).json()) as Record<string, unknown>;
    expect(raw).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      involvedObject: { kind: 'StatefulSet', name: 'validator' },
      related: { kind: 'Pod', name: 'validator-0' },
      message: 'six validators active',
      action: 'Scale',
      reportingComponent: 'cluster-manager',
      reportingInstance: 'cm-0',
      eventTime: '2026-01-01T10:59:00.000001Z',
      series: { count: 7, lastObservedTime: '2026-01-01T11:00:00.123456Z' },
      // What Go writes for the fields the new API leaves empty.
      source: {},
      firstTimestamp: null,
      lastTimestamp: null,
    });
    const listed = await h.events.listNamespacedEvent({ namespace: 'default' });
    expect(listed.items.map((e) => e.metadata?.name).sort()).toEqual(
      expect.arrayContaining(['legacy', 'modern']),
    );
  });
});

describe("Events of the emulator's components", () => {
  it("writes the scheduler's, the kubelet's and the StatefulSet controller's Events, a repeat counted", async () => {
    const h = await startHarness({ kubelet: { mode: 'simulated', pendingMs: 10, readyMs: 10 } });
    await h.apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet({ name: 'web', replicas: 1, image: 'busybox:1.36' }),
    });
    const pod = await waitFor(async () => {
      const read = await h.core
        .readNamespacedPod({ name: 'web-0', namespace: 'default' })
        .catch(() => undefined);
      return read?.status?.phase === 'Running' ? read : undefined;
    });
    const about = async (name: string) =>
      (
        await h.core.listNamespacedEvent({
          namespace: 'default',
          fieldSelector: `involvedObject.name=${name}`,
        })
      ).items;
    await waitFor(async () => (await about('web-0')).length >= 4, { what: "the pod's events" });
    const podEvents = await about('web-0');
    const scheduled = podEvents.find((e) => e.reason === 'Scheduled');
    expect(scheduled).toMatchObject({
      type: 'Normal',
      message: 'Successfully assigned default/web-0 to kube-emulator',
      reportingComponent: 'default-scheduler',
      action: 'Binding',
      involvedObject: { kind: 'Pod', name: 'web-0', uid: pod.metadata?.uid },
    });
    expect(scheduled?.eventTime).toBeDefined();
    const kubelet = podEvents.filter((e) => e.source?.component === 'kubelet');
    expect(kubelet.map((e) => [e.reason, e.message])).toEqual([
      ['Pulled', 'Container image "busybox:1.36" already present on machine'],
      ['Created', 'Created container main'],
      ['Started', 'Started container main'],
    ]);
    for (const event of kubelet) {
      expect(event.involvedObject.fieldPath).toBe('spec.containers{main}');
      expect(event.source?.host).toBe('kube-emulator');
      expect(event.count).toBe(1);
    }
    expect((await about('web')).map((e) => [e.reason, e.message, e.source?.component])).toEqual([
      [
        'SuccessfulCreate',
        'create Pod web-0 in StatefulSet web successful',
        'statefulset-controller',
      ],
    ]);
    // The same crash twice: one BackOff Event, counted twice, last seen later.
    h.emulator.kubelet.crash('default', 'web-0');
    const firstBackOff = await waitFor(async () =>
      (await about('web-0')).find((e) => e.reason === 'BackOff'),
    );
    expect(firstBackOff.count).toBe(1);
    expect(firstBackOff.type).toBe('Warning');
    h.emulator.kubelet.crash('default', 'web-0');
    const counted = await waitFor(async () =>
      (await about('web-0')).find((e) => e.reason === 'BackOff' && e.count === 2),
    );
    expect(counted.metadata.name).toBe(firstBackOff.metadata.name);
    expect(counted.lastTimestamp?.getTime()).toBeGreaterThanOrEqual(
      firstBackOff.firstTimestamp?.getTime() ?? Number.POSITIVE_INFINITY,
    );
    // Scaling down: the controller's delete, the kubelet's Killing.
    await h.apps.patchNamespacedStatefulSetScale({
      name: 'web',
      namespace: 'default',
      body: [{ op: 'replace', path: '/spec/replicas', value: 0 }],
    });
    await waitFor(async () => (await about('web')).some((e) => e.reason === 'SuccessfulDelete'), {
      what: 'the delete event',
    });
    await waitFor(async () => (await about('web-0')).some((e) => e.reason === 'Killing'), {
      what: 'the Killing event',
    });
  });

  it.skipIf(noKubectl)('shows them in kubectl get events and kubectl describe', async () => {
    const h = await startHarness({ kubelet: { mode: 'simulated', pendingMs: 10, readyMs: 10 } });
    await h.apps.createNamespacedStatefulSet({
      namespace: 'default',
      body: statefulSet({ name: 'web', replicas: 1, image: 'busybox:1.36' }),
    });
    await waitFor(
      async () =>
        (await h.core.listNamespacedEvent({ namespace: 'default' })).items.some(
          (e) => e.reason === 'Started',
        ),
      { what: 'the Started event' },
    );
    const events = await h.kubectl(['get', 'events']);
    expect(events.stdout).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n/);
    expect(events.stdout).toMatch(
      /Normal\s+Scheduled\s+pod\/web-0\s+Successfully assigned default\/web-0 to kube-emulator/,
    );
    expect(events.stdout).toMatch(
      /Normal\s+SuccessfulCreate\s+statefulset\/web\s+create Pod web-0 in StatefulSet web successful/,
    );
    const pod = await h.kubectl(['describe', 'pod', 'web-0']);
    expect(pod.stdout).toMatch(/Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n/);
    expect(pod.stdout).toMatch(
      /Normal\s+Scheduled\s+\S+\s+default-scheduler\s+Successfully assigned/,
    );
    expect(pod.stdout).toMatch(/Normal\s+Started\s+\S+\s+kubelet\s+Started container main/);
    const set = await h.kubectl(['describe', 'statefulset', 'web']);
    expect(set.stdout).toMatch(
      /Normal\s+SuccessfulCreate\s+\S+\s+statefulset-controller\s+create Pod web-0/,
    );
  });
});

// The Events a pod's life writes on a real node, with the reasons and messages of the scheduler
// (pkg/scheduler/schedule_one.go: `Scheduled`, "Successfully assigned %v/%v to %v", through the
// events.k8s.io API) and the kubelet (pkg/kubelet/events/event.go reasons; messages of
// images/image_manager.go and kuberuntime_container.go): Pulled, Created, Started, Killing,
// BackOff, Unhealthy, Failed, FailedMount. The fake kubelets call these at the matching transitions.
import type { EventRecorder } from '../event-recorder.ts';
import { NODE_NAME } from './kubelet.ts';
import type { KubeObject } from '../types.ts';
import { podInfo } from '../kinds.ts';

const kubelet = { component: 'kubelet', host: NODE_NAME };

export class PodEvents {
  readonly #recorder: EventRecorder;

  constructor(recorder: EventRecorder) {
    this.#recorder = recorder;
  }

  scheduled(pod: KubeObject): void {
    this.#recorder.recordNew({
      object: pod,
      info: podInfo,
      controller: 'default-scheduler',
      instance: 'default-scheduler-kube-emulator',
      type: 'Normal',
      reason: 'Scheduled',
      action: 'Binding',
      note: `Successfully assigned ${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''} to ${NODE_NAME}`,
    });
  }

  #container(
    pod: KubeObject,
    container: string,
    event: { type: 'Normal' | 'Warning'; reason: string; message: string },
  ): void {
    this.#recorder.record({
      object: pod,
      info: podInfo,
      source: kubelet,
      ...event,
      fieldPath: `spec.containers{${container}}`,
    });
  }

  /** The image is there (the image table stands for the node's images), then created and started. */
  started(pod: KubeObject, container: string, image: string): void {
    this.#container(pod, container, {
      type: 'Normal',
      reason: 'Pulled',
      message: `Container image "${image}" already present on machine`,
    });
    this.#container(pod, container, {
      type: 'Normal',
      reason: 'Created',
      message: `Created container ${container}`,
    });
    this.#container(pod, container, {
      type: 'Normal',
      reason: 'Started',
      message: `Started container ${container}`,
    });
  }

  killing(pod: KubeObject, container: string): void {
    this.#container(pod, container, {
      type: 'Normal',
      reason: 'Killing',
      message: `Stopping container ${container}`,
    });
  }

  /**
   * A lifecycle hook failed (kuberuntime_container.go: FailedPreStopHook with "PreStopHook
   * failed", no hook output where secrets could leak; FailedPostStartHook with the handler's
   * message).
   */
  hookFailed(
    pod: KubeObject,
    container: string,
    hook: 'PreStop' | 'PostStart',
    message: string,
  ): void {
    this.#container(pod, container, {
      type: 'Warning',
      reason: `Failed${hook}Hook`,
      message,
    });
  }

  backOff(pod: KubeObject, container: string): void {
    this.#container(pod, container, {
      type: 'Warning',
      reason: 'BackOff',
      message: `Back-off restarting failed container ${container} in pod ${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}(${pod.metadata.uid ?? ''})`,
    });
  }

  unhealthy(pod: KubeObject, container: string, why: string): void {
    this.#container(pod, container, {
      type: 'Warning',
      reason: 'Unhealthy',
      message: `Readiness probe failed: ${why}`,
    });
  }

  /**
   * A volume's setup failed: reason `FailedMount` (pkg/kubelet/events/event.go), with the message
   * of pkg/volume/util/operationexecutor/operation_generator.go (`MountVolume.SetUp failed for
   * volume "<name>" : <error>`). About the pod, not a container; a repeat bumps its count.
   */
  failedMount(pod: KubeObject, volume: string, why: string): void {
    this.#recorder.record({
      object: pod,
      info: podInfo,
      source: kubelet,
      type: 'Warning',
      reason: 'FailedMount',
      message: `MountVolume.SetUp failed for volume "${volume}" : ${why}`,
    });
  }

  pullFailed(pod: KubeObject, container: string, image: string): void {
    this.#container(pod, container, {
      type: 'Warning',
      reason: 'Failed',
      message: `Failed to pull image "${image}": the image is not in the kube-emulator's image table`,
    });
    this.#container(pod, container, {
      type: 'Warning',
      reason: 'Failed',
      message: 'Error: ErrImagePull',
    });
  }
}

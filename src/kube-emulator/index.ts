// The public surface of the Kubernetes API emulator (see docs/kube-emulator.md).
export { startEmulator, type Emulator, type EmulatorOptions } from './emulator.ts';
export { SnapshotError } from './persistence.ts';
export type { Faults, RestartOptions } from './faults.ts';
export type { KubeletControl } from './kubelets/kubelet.ts';
export type { SimulatedKubeletOptions } from './kubelets/kubelet-simulated.ts';
export {
  HOST_PORTS_ANNOTATION,
  portEnvName,
  type ProcessKubeletOptions,
} from './kubelets/kubelet-process.ts';
export type { ImageCommand } from './kubelets/images.ts';
export type { HostPortChooser, PortRef } from './kubelets/host-ports.ts';
export { freeLoopbackPorts } from './kubelets/loopback-ports.ts';
export type { KubeconfigOptions } from './kubeconfig.ts';
export type { ServiceAccountRef } from './auth/auth.ts';
export type { Clock, Cancel } from './clock.ts';
export type { LoggedRequest } from './api-server/http-server.ts';
export type { Store, StoreEvent } from './store.ts';
export type { KubeObject } from './types.ts';

// The public surface of the Kubernetes API emulator (see docs/kube-emulator.md).
export { startEmulator, type Emulator, type EmulatorOptions } from './emulator.ts';
export type { Faults, RestartOptions } from './faults.ts';
export type { KubeletControl } from './kubelet.ts';
export type { SimulatedKubeletOptions } from './kubelet-simulated.ts';
export {
  HOST_PORTS_ANNOTATION,
  portEnvName,
  type ImageCommand,
  type ProcessKubeletOptions,
} from './kubelet-process.ts';
export type { HostPortChooser, PortRef } from './host-ports.ts';
export { freeLoopbackPorts } from './loopback-ports.ts';
export type { KubeconfigOptions } from './kubeconfig.ts';
export type { ServiceAccountRef } from './auth.ts';
export type { Clock, Cancel } from './clock.ts';
export type { LoggedRequest } from './http-server.ts';
export type { Store, StoreEvent } from './store.ts';
export type { KubeObject } from './types.ts';

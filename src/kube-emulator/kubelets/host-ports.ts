// Host ports for process-mode pods: one free loopback port per (namespace, pod, port), stable
// for the life of the emulator so that a recreated pod gets the same ports again.
import { freeLoopbackPorts } from './loopback-ports.ts';

export interface PortRef {
  name?: string;
  containerPort: number;
}

/** Fixes a port for a pod's container port; undefined lets the emulator pick a free one. */
export type HostPortChooser = (
  pod: { namespace: string; name: string },
  port: PortRef,
) => number | undefined;

/** The key a port is published under: its name, or its number as a string when unnamed. */
export function portKey(port: PortRef): string {
  return port.name ?? String(port.containerPort);
}

export class HostPorts {
  readonly #chooser: HostPortChooser | undefined;
  readonly #assigned = new Map<string, number>();
  readonly #taken = new Set<number>();
  readonly #reserved: ReadonlySet<number>;

  /** `reserved`: ports never picked on its own (the ones `chooser` fixes, the caller's own). */
  constructor(chooser: HostPortChooser | undefined, reserved: Iterable<number> = []) {
    this.#chooser = chooser;
    this.#reserved = new Set(reserved);
  }

  /** The host port of one container port of a pod (the same on every call). */
  async portFor(pod: { namespace: string; name: string }, port: PortRef): Promise<number> {
    const key = `${pod.namespace}/${pod.name}/${portKey(port)}`;
    const known = this.#assigned.get(key);
    if (known !== undefined) return known;
    // A port the chooser fixes is taken as is; one picked here is outside the ephemeral range
    // (loopback-ports.ts) and is none of the ports already given or reserved.
    const chosen =
      this.#chooser?.(pod, port) ??
      (await freeLoopbackPorts(1, { avoid: new Set([...this.#taken, ...this.#reserved]) }))[0] ??
      0;
    // Another call may have assigned this key while we waited for a free port.
    const raced = this.#assigned.get(key);
    if (raced !== undefined) return raced;
    this.#assigned.set(key, chosen);
    this.#taken.add(chosen);
    return chosen;
  }
}

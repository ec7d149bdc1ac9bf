// A plausible log for the simulated kubelet's pods, which run no process: a line when a container
// starts, becomes ready, crashes or is stopped, in the same per-instance files `pods/log` reads.
import type { ContainerLogs, LogWriter } from './container-logs.ts';
import type { ContainerReport } from './pod-status.ts';
import type { KubeObject } from '../types.ts';

interface Open {
  instance: number;
  writer: LogWriter;
  ready: boolean;
}

export class SimulatedLogs {
  readonly #logs: ContainerLogs;
  /** By `uid/container`. */
  readonly #open = new Map<string, Open>();

  constructor(logs: ContainerLogs) {
    this.#logs = logs;
  }

  /** Writes what changed since the last status of `pod`: starts, readiness, crashes. */
  update(pod: KubeObject, containers: readonly ContainerReport[]): void {
    const uid = pod.metadata.uid ?? '';
    for (const report of containers) {
      const key = `${uid}/${report.name}`;
      let open = this.#open.get(key);
      if (open !== undefined && open.instance !== report.restartCount) {
        open.writer.write(
          'stderr',
          `container "${report.name}" exited with code 1 (simulated crash)\n`,
        );
        open.writer.end();
        this.#open.delete(key);
        open = undefined;
      }
      if (report.state.type !== 'running') continue;
      if (open === undefined) {
        const writer = this.#logs.open({
          namespace: pod.metadata.namespace ?? '',
          pod: pod.metadata.name ?? '',
          uid,
          container: report.name,
          instance: report.restartCount,
        });
        writer.write(
          'stdout',
          `kube-emulator: simulated container "${report.name}" started (no process runs in simulated mode)\n`,
        );
        open = { instance: report.restartCount, writer, ready: false };
        this.#open.set(key, open);
      }
      if (report.ready && !open.ready) open.writer.write('stdout', 'kube-emulator: ready\n');
      open.ready = report.ready;
    }
  }

  /** The pod is being stopped: each open log gets its last line and ends. */
  stop(pod: KubeObject): void {
    const prefix = `${pod.metadata.uid ?? ''}/`;
    for (const [key, open] of this.#open) {
      if (!key.startsWith(prefix)) continue;
      open.writer.write('stdout', 'kube-emulator: received SIGTERM, stopping\n');
      open.writer.end();
      this.#open.delete(key);
    }
  }

  /** The pod is gone: its logs go too. */
  async remove(pod: KubeObject): Promise<void> {
    this.stop(pod);
    await this.#logs.removePod({
      namespace: pod.metadata.namespace ?? '',
      pod: pod.metadata.name ?? '',
      uid: pod.metadata.uid ?? '',
    });
  }

  /** Ends every open log (the kubelet stops). */
  close(): void {
    for (const open of this.#open.values()) open.writer.end();
    this.#open.clear();
  }
}

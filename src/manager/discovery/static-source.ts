// Static discovery: the validators listed in a file are wanted, their nodes are ready while they
// answer their health and height queries, and their keys come from a keys file. Both files are
// read again every `watchIntervalMs`; a file that turns invalid (half-written, a bad entry, a keys
// file others may read) keeps the last good version in force and is reported by name (log,
// `GET /readyz` informers, metric), while everything else keeps working. No Kubernetes at all:
// Events go to the log and there is no leader election.
import { stat } from 'node:fs/promises';
import type { NodeProbe } from '../chain/port.ts';
import type { DesiredState, DesiredValidator, ValidatorId } from '../model.ts';
import { readBoundedFile } from './bounded-file.ts';
import { DiscoveryFileError } from './discovery-file-error.ts';
import { checkKeysFileMode, parseKeysFile } from './keys-file.ts';
import { LogEventSink } from './log-events.ts';
import {
  type DiscoveryDeps,
  type DiscoveryMode,
  type EventTarget,
  type KeySet,
  type DiscoveryListener,
  type DiscoverySource,
  type SourceStatus,
} from './port.ts';
import { parseValidatorsFile, type StaticValidator } from './validators-file.ts';

export type { NodeProbe };

/** What static discovery reads from disk (tests give an in-memory one). */
export interface StaticFiles {
  read(path: string): Promise<string>;
  /** The file's mode bits and whether it is a directory; rejects when it does not exist. */
  mode(path: string): Promise<number>;
}

export const diskFiles: StaticFiles = {
  read: readBoundedFile,
  mode: async (path) => (await stat(path)).mode,
};

export interface StaticDiscoveryOptions extends DiscoveryDeps {
  validatorsFile: string;
  keysFile: string;
  /** The chain's readiness check of a listed node (`ChainPort.nodeReady`). */
  probe: NodeProbe;
  files?: StaticFiles;
  /** How often both files are read again (default 1 s). */
  watchIntervalMs?: number;
  /** How often each listed node is asked for its health and height (default 1 s). */
  probeIntervalMs?: number;
  /** A probe that has not answered by then fails (default 2 s). */
  probeTimeoutMs?: number;
}

/** One watched file: the last good value, the last text read, and the problem now in force. */
interface Watched<T> {
  readonly name: string;
  readonly path: string;
  good: T | undefined;
  text: string | undefined;
  error: DiscoveryFileError | undefined;
  reloads: number;
}

interface Health {
  rpc: string;
  ready: boolean;
  readySince: number | undefined;
  lastError: string | undefined;
}

export class StaticDiscovery implements DiscoverySource {
  readonly mode: DiscoveryMode = 'static';
  readonly events: LogEventSink;
  readonly #o: StaticDiscoveryOptions;
  readonly #files: StaticFiles;
  readonly #validators: Watched<StaticValidator[]>;
  readonly #keys: Watched<KeySet>;
  readonly #health = new Map<ValidatorId, Health>();
  readonly #abort = new AbortController();
  #listener: DiscoveryListener | undefined;
  #cancelWatch: (() => void) | undefined;
  #cancelProbe: (() => void) | undefined;
  #probing = false;
  #stopped = false;

  constructor(options: StaticDiscoveryOptions) {
    this.#o = options;
    this.#files = options.files ?? diskFiles;
    this.events = new LogEventSink(options.logger.child({ component: 'events' }));
    this.#validators = watched('validators-file', options.validatorsFile);
    this.#keys = watched('keys-file', options.keysFile);
  }

  get keysLabel(): string {
    return `keys file ${this.#o.keysFile}`;
  }

  async start(listener: DiscoveryListener): Promise<void> {
    this.#listener = listener;
    await this.#readAll();
    this.#scheduleWatch();
    void this.#probeAll();
  }

  stop(): Promise<void> {
    this.#stopped = true;
    this.#cancelWatch?.();
    this.#cancelProbe?.();
    this.#abort.abort(new Error('static discovery stopped'));
    return Promise.resolve();
  }

  get layoutSynced(): boolean {
    return this.#validators.good !== undefined;
  }

  get synced(): boolean {
    return this.#validators.good !== undefined && this.#keys.good !== undefined;
  }

  computeDesired(_now: number): DesiredState {
    const validators = new Map<ValidatorId, DesiredValidator>();
    for (const entry of this.#validators.good ?? []) {
      const health = this.#health.get(entry.id);
      const ready = health?.rpc === entry.rpc && health.ready;
      validators.set(entry.id, {
        id: entry.id,
        wanted: true,
        wantedReason: `listed in ${this.#o.validatorsFile}`,
        statefulSet: undefined,
        ordinal: undefined,
        pod: {
          name: `node-${entry.id}`,
          namespace: '',
          uid: `static:${entry.id}`,
          ready,
          readySince: ready ? health.readySince : undefined,
          terminating: false,
          held: entry.hold,
          draining: false,
          nodeRpcUrl: entry.rpc,
          serviceUrl: entry.serviceUrl,
        },
        conflict: undefined,
      });
    }
    return { validators, unresolvedWanted: [], problems: [] };
  }

  keys(): KeySet | undefined {
    return this.#keys.good;
  }

  keysTarget(): EventTarget {
    return target('KeysFile', this.#o.keysFile);
  }

  eventTarget(id: ValidatorId): EventTarget {
    return target('Validator', id);
  }

  chainTargets(): EventTarget[] {
    return [target('Chain', 'chain')];
  }

  forcedMinimumSet(): undefined {
    return undefined;
  }

  scaleUnsupported(): string {
    return `static discovery has nothing to scale: the validators are the ones listed in ${this.#o.validatorsFile}; add or remove entries there to stake or unstake them`;
  }

  status(): SourceStatus[] {
    return [this.#validators, this.#keys].map((file) => ({
      name: file.name,
      synced: file.good !== undefined,
      restarts: file.reloads,
      lastError: file.error?.message,
    }));
  }

  describe(): Record<string, unknown> {
    return {
      discovery: this.mode,
      validatorsFile: this.#o.validatorsFile,
      keysFile: this.#o.keysFile,
      validators: this.#validators.good?.length ?? 0,
    };
  }

  /** Read through a call, so checks after an `await` are not narrowed away. */
  #isStopped(): boolean {
    return this.#stopped;
  }

  /** Reads both files; tells the listener what changed. */
  async #readAll(): Promise<void> {
    const [validators, keys] = await Promise.all([
      this.#reload(this.#validators, (text) =>
        parseValidatorsFile(this.#o.validatorsFile, text, this.#o.ids),
      ),
      this.#reload(this.#keys, (text) => parseKeysFile(this.#o.keysFile, text, this.#o.ids), true),
    ]);
    if (this.#isStopped()) return;
    if (validators) {
      this.#forgetUnlisted();
      this.#listener?.desiredChanged();
      void this.#probeAll();
    }
    if (keys) this.#listener?.keysChanged();
  }

  /**
   * Reads one file again. Returns true when a new good version took effect. A problem keeps the
   * last good version and is reported once (until it changes or clears).
   */
  async #reload<T>(
    file: Watched<T>,
    parse: (text: string) => T | Promise<T>,
    secret = false,
  ): Promise<boolean> {
    let text: string;
    try {
      if (secret) checkKeysFileMode(file.path, await this.#files.mode(file.path));
      text = await this.#files.read(file.path);
    } catch (error: unknown) {
      this.#problem(file, asFileError(file, error));
      return false;
    }
    if (text === file.text && file.error === undefined) return false;
    const wasBad = file.error !== undefined;
    file.text = text;
    let value: T;
    try {
      value = await parse(text);
    } catch (error: unknown) {
      this.#problem(file, asFileError(file, error));
      return false;
    }
    file.error = undefined;
    this.#o.metrics.discoveryProblems.set({ file: file.name }, 0);
    if (wasBad) this.#o.logger.info({ file: file.path }, `${file.name} is valid again`);
    if (file.good !== undefined && sameJson(file.good, value)) return false;
    if (file.good !== undefined) file.reloads++;
    file.good = value;
    this.#o.logger.info({ file: file.path }, `${file.name} read`);
    return true;
  }

  #problem<T>(file: Watched<T>, error: DiscoveryFileError): void {
    const repeated = file.error?.message === error.message;
    file.error = error;
    this.#o.metrics.discoveryProblems.set({ file: file.name }, 1);
    if (repeated) return;
    this.#o.logger.warn(
      { file: file.path, code: error.code, problems: error.problems },
      file.good === undefined
        ? `${file.name} is not usable: ${error.message}`
        : `${file.name} is not usable; the last good version stays in force: ${error.message}`,
    );
  }

  /** An id no longer listed (or listed with another node) is probed afresh when it comes back. */
  #forgetUnlisted(): void {
    const listed = new Map((this.#validators.good ?? []).map((v) => [v.id, v.rpc]));
    for (const [id, health] of this.#health)
      if (listed.get(id) !== health.rpc) this.#health.delete(id);
  }

  #scheduleWatch(): void {
    if (this.#stopped) return;
    this.#cancelWatch = this.#o.clock.setTimer(() => {
      void this.#readAll().finally(() => this.#scheduleWatch());
    }, this.#o.watchIntervalMs ?? 1_000);
  }

  /** Asks every listed node whether it is ready; a change of readiness changes the desired state. */
  async #probeAll(): Promise<void> {
    if (this.#probing || this.#isStopped()) return;
    this.#probing = true;
    this.#cancelProbe?.();
    try {
      const changed = await Promise.all((this.#validators.good ?? []).map((v) => this.#probe(v)));
      if (changed.some(Boolean) && !this.#isStopped()) this.#listener?.desiredChanged();
    } finally {
      this.#probing = false;
      if (!this.#isStopped())
        this.#cancelProbe = this.#o.clock.setTimer(
          () => void this.#probeAll(),
          this.#o.probeIntervalMs ?? 1_000,
        );
    }
  }

  /** Probes one node; true when its readiness changed. */
  async #probe(entry: StaticValidator): Promise<boolean> {
    const timeout = AbortSignal.timeout(this.#o.probeTimeoutMs ?? 2_000);
    const signal = AbortSignal.any([timeout, this.#abort.signal]);
    let error: string | undefined;
    try {
      await this.#o.probe(entry.rpc, signal);
    } catch (cause: unknown) {
      error = cause instanceof Error ? cause.message : String(cause);
    }
    if (this.#isStopped()) return false;
    const before = this.#health.get(entry.id);
    const same = before?.rpc === entry.rpc ? before : undefined;
    const ready = error === undefined;
    const now = this.#o.clock.now();
    this.#health.set(entry.id, {
      rpc: entry.rpc,
      ready,
      readySince: ready ? (same?.ready === true ? same.readySince : now) : undefined,
      lastError: error,
    });
    if (same?.ready !== ready && !ready)
      this.#o.logger.debug({ validator: entry.id, rpc: entry.rpc, error }, 'node not ready');
    return same?.ready !== ready;
  }
}

function watched<T>(name: string, path: string): Watched<T> {
  return { name, path, good: undefined, text: undefined, error: undefined, reloads: 0 };
}

function target(kind: string, name: string): EventTarget {
  return { kind, name };
}

function asFileError<T>(file: Watched<T>, error: unknown): DiscoveryFileError {
  if (error instanceof DiscoveryFileError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  return new DiscoveryFileError(
    file.name === 'keys-file' ? 'KEYS_FILE_INVALID' : 'VALIDATORS_FILE_INVALID',
    file.path,
    [`cannot read it (${code ?? (error instanceof Error ? error.message : String(error))})`],
  );
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

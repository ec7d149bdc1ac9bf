// Per-container-instance log files in the CRI format the kubelet reads (one line per record:
// `<RFC 3339 nano time> <stdout|stderr> <F|P> <text>`), under `D/pod-logs/<ns>_<pod>_<uid>/
// <container>/<instance>.log` as a kubelet keeps /var/log/pods; and reading them back the way
// `GET pods/<name>/log` answers (tail, since, timestamps, byte limit, follow).
import { closeSync, fstatSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../clock.ts';

/** One run of one container: instance 0 is the first start, n the n-th restart. */
export interface ContainerInstance {
  namespace: string;
  pod: string;
  uid: string;
  container: string;
  instance: number;
}

export type LogStream = 'stdout' | 'stderr';

/** Appends a container's output to its instance's log file, line by line. */
export interface LogWriter {
  write(stream: LogStream, chunk: Buffer | string): void;
  /** Flushes any partial line and marks the instance finished (followers end). */
  end(): void;
}

export interface LogReadOptions {
  /** Prefix every line with its RFC 3339 timestamp. */
  timestamps: boolean;
  /** Only the last n lines (before following). */
  tailLines?: number;
  /** Only lines at or after this time (ms since the epoch). */
  since?: number;
  /** Stop after this many bytes of output. */
  limitBytes?: number;
  /** Keep streaming new lines until the instance ends or `signal` aborts. */
  follow: boolean;
  signal: AbortSignal;
}

/** A line longer than this is cut into partial (`P`) records, as container runtimes do. */
const MAX_RECORD = 16 * 1024;

interface Live {
  readonly listeners: Set<() => void>;
  ended: boolean;
}

/**
 * RFC 3339 with nanoseconds and trailing zeros cut, as Go's `time.RFC3339Nano` writes it: the
 * clock's milliseconds and the monotonic clock's sub-millisecond digits.
 */
function nanoTime(ms: number): string {
  const base = new Date(ms).toISOString().slice(0, 23); // …SS.mmm
  const sub = String(process.hrtime.bigint() % 1_000_000n).padStart(6, '0');
  const digits = `${base.slice(20)}${sub}`.replace(/0+$/, '');
  return `${base.slice(0, 19)}${digits === '' ? '' : `.${digits}`}Z`;
}

interface LogRecord {
  time: string;
  ms: number;
  stream: string;
  partial: boolean;
  text: string;
}

function parseRecord(line: string): LogRecord | undefined {
  const first = line.indexOf(' ');
  const second = line.indexOf(' ', first + 1);
  const third = line.indexOf(' ', second + 1);
  if (first < 0 || second < 0 || third < 0) return undefined;
  const time = line.slice(0, first);
  const ms = Date.parse(time);
  if (Number.isNaN(ms)) return undefined;
  return {
    time,
    ms,
    stream: line.slice(first + 1, second),
    partial: line.slice(second + 1, third) === 'P',
    text: line.slice(third + 1),
  };
}

export class ContainerLogs {
  readonly #dir: string;
  readonly #clock: Clock;
  readonly #live = new Map<string, Live>();
  /** The logs themselves when kept in memory (the simulated kubelet's few lines), by path. */
  readonly #memory: Map<string, string> | undefined;

  /** `memory`: keep the logs in memory instead of files (for short, synthetic logs). */
  constructor(options: { dir: string; clock: Clock; memory?: boolean }) {
    this.#dir = join(options.dir, 'pod-logs');
    this.#clock = options.clock;
    this.#memory = options.memory === true ? new Map() : undefined;
  }

  #podFolder(ref: Pick<ContainerInstance, 'namespace' | 'pod' | 'uid'>): string {
    return join(this.#dir, `${ref.namespace}_${ref.pod}_${ref.uid}`);
  }

  /** The file of one container instance. */
  pathOf(ref: ContainerInstance): string {
    return join(this.#podFolder(ref), ref.container, `${ref.instance}.log`);
  }

  /**
   * Starts the log of a new container instance (an empty file, mode 0600). Only the instance
   * before it is kept besides it (what `--previous` reads), as the kubelet keeps one dead
   * container per container name.
   */
  open(ref: ContainerInstance): LogWriter {
    const path = this.pathOf(ref);
    const memory = this.#memory;
    const older =
      ref.instance >= 2 ? this.pathOf({ ...ref, instance: ref.instance - 2 }) : undefined;
    let fd: number | undefined;
    if (memory === undefined) {
      mkdirSync(join(this.#podFolder(ref), ref.container), { recursive: true, mode: 0o700 });
      if (older !== undefined) rmSync(older, { force: true });
      fd = openSync(path, 'a', 0o600);
    } else {
      if (older !== undefined) memory.delete(older);
      memory.set(path, memory.get(path) ?? '');
    }
    const live: Live = { listeners: new Set(), ended: false };
    this.#live.set(path, live);
    const pending: Record<LogStream, string> = { stdout: '', stderr: '' };
    const notify = (): void => {
      for (const listener of live.listeners) listener();
    };
    const append = (stream: LogStream, text: string, partial: boolean): void => {
      if (live.ended) return;
      const record = `${nanoTime(this.#clock.now())} ${stream} ${partial ? 'P' : 'F'} ${text}\n`;
      if (fd !== undefined) writeSync(fd, record);
      else memory?.set(path, (memory.get(path) ?? '') + record);
    };
    return {
      write: (stream, chunk) => {
        if (live.ended) return;
        let text = pending[stream] + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
        let newline = text.indexOf('\n');
        while (newline >= 0) {
          append(stream, text.slice(0, newline), false);
          text = text.slice(newline + 1);
          newline = text.indexOf('\n');
        }
        while (text.length >= MAX_RECORD) {
          append(stream, text.slice(0, MAX_RECORD), true);
          text = text.slice(MAX_RECORD);
        }
        pending[stream] = text;
        notify();
      },
      end: () => {
        if (live.ended) return;
        for (const stream of ['stdout', 'stderr'] as const) {
          if (pending[stream] !== '') append(stream, pending[stream], true);
          pending[stream] = '';
        }
        live.ended = true;
        if (fd !== undefined) closeSync(fd);
        this.#live.delete(path);
        notify();
      },
    };
  }

  /** Whether a writer is still open on this instance. */
  isLive(ref: ContainerInstance): boolean {
    return this.#live.has(this.pathOf(ref));
  }

  /** Removes every log of a pod (the kubelet's clean-up once the pod is gone). */
  async removePod(ref: Pick<ContainerInstance, 'namespace' | 'pod' | 'uid'>): Promise<void> {
    const folder = this.#podFolder(ref);
    if (this.#memory === undefined) await rm(folder, { recursive: true, force: true });
    else
      for (const path of [...this.#memory.keys()])
        if (path.startsWith(`${folder}/`)) this.#memory.delete(path);
  }

  /** What has been appended to a log since the last call, read from its file or memory. */
  #source(path: string): { next: () => string; close: () => void } | undefined {
    const memory = this.#memory;
    if (memory !== undefined) {
      if (!memory.has(path)) return undefined;
      let offset = 0;
      return {
        next: () => {
          const text = memory.get(path) ?? '';
          const fresh = text.slice(offset);
          offset = text.length;
          return fresh;
        },
        close: () => undefined,
      };
    }
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch {
      return undefined;
    }
    let offset = 0;
    let bytes = Buffer.alloc(0);
    return {
      next: () => {
        const size = fstatSync(fd).size;
        if (size <= offset) return '';
        const buffer = Buffer.alloc(size - offset);
        const read = readSync(fd, buffer, 0, buffer.length, offset);
        offset += read;
        // A UTF-8 character cut at the end waits for the rest of its bytes.
        bytes = Buffer.concat([bytes, buffer.subarray(0, read)]);
        const end = bytes.lastIndexOf(0x0a) + 1;
        const text = bytes.subarray(0, end).toString('utf8');
        bytes = bytes.subarray(end);
        return text;
      },
      close: () => closeSync(fd),
    };
  }

  /**
   * Writes the instance's log to `out` as `GET pods/<name>/log` answers it; resolves when done
   * (at once, or once the instance ends when following). A missing file is an empty log.
   */
  async read(
    ref: ContainerInstance,
    options: LogReadOptions,
    out: (text: string) => void,
  ): Promise<void> {
    const path = this.pathOf(ref);
    const source = this.#source(path);
    if (source === undefined) return;
    let carry = '';
    let budget = options.limitBytes ?? Number.POSITIVE_INFINITY;
    const emit = (record: LogRecord): boolean => {
      if (options.since !== undefined && record.ms < options.since) return true;
      let text = `${options.timestamps ? `${record.time} ` : ''}${record.text}${record.partial ? '' : '\n'}`;
      const bytes = Buffer.byteLength(text);
      if (bytes > budget) text = Buffer.from(text).subarray(0, budget).toString('utf8');
      budget -= Math.min(bytes, budget);
      if (text !== '') out(text);
      return budget > 0;
    };
    /** Reads what was appended since the last call: complete records only. */
    const fresh = (): LogRecord[] => {
      const lines = (carry + source.next()).split('\n');
      carry = lines.pop() ?? '';
      return lines.flatMap((line) => {
        const record = parseRecord(line);
        return record === undefined ? [] : [record];
      });
    };
    try {
      let records = fresh();
      if (options.tailLines !== undefined) {
        records = options.tailLines === 0 ? [] : records.slice(-options.tailLines);
      }
      for (const record of records) if (!emit(record)) return;
      if (!options.follow) return;
      const live = this.#live.get(path);
      if (live === undefined) return;
      await new Promise<void>((resolve) => {
        const finish = (): void => {
          live.listeners.delete(listener);
          options.signal.removeEventListener('abort', finish);
          resolve();
        };
        const listener = (): void => {
          for (const record of fresh()) {
            if (!emit(record)) return finish();
          }
          if (live.ended) finish();
        };
        live.listeners.add(listener);
        options.signal.addEventListener('abort', finish);
        if (options.signal.aborted) finish();
        else listener(); // anything written between the first read and now
      });
    } finally {
      source.close();
    }
  }
}

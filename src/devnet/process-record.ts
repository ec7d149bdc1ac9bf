// `<dir>/processes.json`: the processes a running devnet has started (the manager, every node
// process of every pod), kept current while it runs, so that `cluster-manager devnet reset` can
// stop the ones a devnet killed with SIGKILL left behind.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, readlink, rename, writeFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { asStamp, isSameProcess, stampOf, type ProcessStamp } from '../cli/process-stamp.ts';

export const PROCESSES_FILE = 'processes.json';

/** Every live process below `root` (children, grandchildren…), from /proc. */
export function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      const ppid = Number(fields[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const stack = [...(children.get(root) ?? [])];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out.sort((a, b) => a - b);
}

/** What a pod event tells about the pod's processes (`previous` undefined: the pod is new). */
interface PodChange {
  readonly type: string;
  readonly object: unknown;
  readonly previous: unknown;
}

/**
 * True when a pod event may mean a process started or ended: the pod came or went, it is being
 * deleted (its preStop hooks run), or a container's state or restart count changed. The
 * manager's annotations and the kubelet's readiness flips start nothing, and were most of a busy
 * devnet's pod events: each scheduled a full scan of /proc.
 */
export function podProcessesMayChange(event: PodChange): boolean {
  if (event.type !== 'MODIFIED' || event.previous === undefined) return true;
  return processSignature(event.object) !== processSignature(event.previous);
}

function processSignature(pod: unknown): string {
  const p = pod as {
    metadata?: { deletionTimestamp?: unknown };
    status?: { containerStatuses?: unknown[]; initContainerStatuses?: unknown[] };
  };
  const containers = [
    ...(p.status?.initContainerStatuses ?? []),
    ...(p.status?.containerStatuses ?? []),
  ];
  return JSON.stringify([
    p.metadata?.deletionTimestamp ?? null,
    containers.map((c) => {
      const status = c as { name?: unknown; restartCount?: unknown; state?: object };
      return [status.name, status.restartCount, Object.keys(status.state ?? {})];
    }),
  ]);
}

/** Processes whose working folder is inside `dir` (a devnet's pods run in `<dir>/emulator/…`). */
export async function processesInside(dir: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const cwd = await readlink(`/proc/${entry}/cwd`).catch(() => '');
    if (cwd === dir || cwd.startsWith(`${dir}${sep}`)) found.push(Number(entry));
  }
  return found;
}

/**
 * Managers of the devnet in `dir` (`cluster-manager run` whose KUBECONFIG or CM_JOURNAL_PATH lies
 * inside it), found by their environment: a manager runs in its starter's working folder, so only
 * the record or this names it, and one spawned just before its devnet was killed may not be in the
 * record yet. CLI commands with the devnet's KUBECONFIG exported (`devnet env`) are not managers.
 */
export function managersOf(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let argv: string[];
    let environ: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!isManagerArgv(argv)) continue;
      environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    const inside = environ.some((line) => {
      const [name, value] = [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)];
      return (
        (name === 'KUBECONFIG' || name === 'CM_JOURNAL_PATH') && value.startsWith(`${dir}${sep}`)
      );
    });
    if (inside) found.push(Number(entry));
  }
  return found;
}

/** `… cluster-manager(.ts|.mjs) run …`: the manager service, from sources or a bundle. */
function isManagerArgv(argv: readonly string[]): boolean {
  const at = argv.findIndex((arg) => /(?:^|\/)cluster-manager(?:\.ts|\.mjs)?$/.test(arg));
  return at >= 0 && argv[at + 1] === 'run';
}

/**
 * Keeps `<dir>/processes.json` equal to the descendants of this process while started: scanned
 * every `intervalMs` and on `poke()` (a pod changed), written only when the set changed.
 */
export class ProcessRecorder {
  readonly #path: string;
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #written = '';
  #writing: Promise<void> = Promise.resolve();
  /** The scan queued behind the one running, not started yet. */
  #queued: Promise<void> | undefined;

  constructor(dir: string, intervalMs = 2_000) {
    this.#path = join(dir, PROCESSES_FILE);
    this.#intervalMs = intervalMs;
  }

  start(): void {
    void this.poke();
    this.#timer = setInterval(() => void this.poke(), this.#intervalMs);
    this.#timer.unref();
  }

  /**
   * Scans now (soon after a pod started or stopped); resolves once that scan is on disk. A poke
   * while a scan waits its turn joins it: that scan starts after the poke, so it sees what
   * prompted it. (Every pod event pokes; a burst of them had queued a full /proc scan each, about
   * a second of CPU per devnet test file.)
   */
  poke(): Promise<void> {
    if (this.#queued !== undefined) return this.#queued;
    const scan = this.#writing
      .then(() => {
        this.#queued = undefined;
        return this.#record();
      })
      .catch(() => undefined);
    this.#queued = scan;
    this.#writing = scan;
    return scan;
  }

  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#writing;
  }

  async #record(): Promise<void> {
    const stamps = descendantsOf(process.pid)
      .map(stampOf)
      .filter((s): s is ProcessStamp => s !== undefined);
    const text = `${JSON.stringify({ devnet: stampOf(process.pid), processes: stamps }, null, 2)}\n`;
    // The command line is part of what is compared: a child scanned between its fork and its
    // exec shows the devnet's own argv, and a record keeping that would make `devnet reset`
    // refuse to signal it (isSameProcess) once it runs the manager or a node.
    const key = stamps.map((s) => `${s.pid}:${s.startTime}:${s.command}`).join('\n');
    if (key === this.#written) return;
    const aside = `${this.#path}.${randomBytes(4).toString('hex')}`;
    await writeFile(aside, text, { mode: 0o600 });
    await rename(aside, this.#path);
    this.#written = key;
  }
}

/** The processes `<dir>/processes.json` names that still run as recorded (checked, never guessed). */
export async function recordedProcesses(dir: string): Promise<ProcessStamp[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(join(dir, PROCESSES_FILE), 'utf8'));
  } catch {
    return [];
  }
  const list = (parsed as { processes?: unknown } | null)?.processes;
  if (!Array.isArray(list)) return [];
  return list
    .map(asStamp)
    .filter((s): s is ProcessStamp => s !== undefined)
    .filter(isSameProcess);
}

// CLI mode: run the node's CLI (`p1` syntax) as Pocket's own cluster-manager did, but bounded and
// cancellable, by absolute path with an args array, no shell and an explicit environment. The key
// reaches the CLI only through a private temporary keybase (0700 dir, 0600 file) removed in all
// cases; never argv, never a log. A manager killed mid-call (SIGKILL) cannot remove its keybase,
// so each folder is named with the owner's pid and a random instance tag, and `removeLeftovers`
// (run at start) removes those whose owner is gone: its pid is dead, or it is our own pid with
// another tag (a restarted container gives the new process the same pid). `p1` exits 0 even on
// HTTP errors, so the outcome is read from its `HTTP status code: N` line. `p1 Debug …` loads a
// node config and a genesis (CONFIG_PATH, GENESIS_PATH: app/client/cli/helpers/setup.go:28,
// common.go:18) and exits 1 without them, so the adapter passes both when configured, and
// POCKET_P2P_HOSTNAME=127.0.0.1 as V1's cli-client does (the chart's hostname is ""). A failed
// call is reported by its cause: cobra's `Error: …` line, Go's `log.Fatal` line, or the fatal
// log line p1 prints on stdout — never the usage text that follows cobra's error.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseV1ErrorText, V1Code } from '../../../pocket/index.ts';
import { ManagerError } from '../../errors.ts';
import { PocketErrors } from './pocket-errors.ts';
import { ActionKind, type ActionRecord } from '../../model.ts';
import type {
  ChainAdapter,
  PreparedTx,
  SendOutcome,
  TransportCapabilities,
  TxRequest,
} from '../adapter.ts';
import { Slots } from '../../slots.ts';
import { pocketKey } from './pocket-key.ts';
import { relayChainsOf } from './pocket-stake.ts';

export interface CliChainAdapterOptions {
  /** Absolute path of the CLI (p1 or localnet-cli). */
  cliPath: string;
  /** The chain RPC the CLI talks to (`--remote_cli_url`). */
  rpcUrl: string;
  timeoutMs: number;
  /** Folder for the private temporary keybases (default: the OS temp folder). */
  tempRoot?: string;
  /** PATH given to the CLI (its only inherited variable). */
  path?: string | undefined;
  /** Node config file passed as `CONFIG_PATH` (absolute). */
  configPath?: string | undefined;
  /** Genesis file passed as `GENESIS_PATH` (absolute). */
  genesisPath?: string | undefined;
}

const STATUS_RE = /HTTP status code: (\d+)\s*\n?([\s\S]*)$/;
const KILL_AFTER_MS = 2_000;
/**
 * CLI calls of one adapter running at once (each runs its processes one after another). The
 * manager reconciles up to CM_CONCURRENCY validators at once (32 by default, for RPC mode's group
 * commits); in CLI mode each would start a process (p1, or a Node CLI of about 50 MiB), so the
 * calls wait for one of these slots, before any key is written.
 */
export const CLI_PROCESSES = 8;

/** This process's tag in its temporary folders' names. */
const INSTANCE = randomBytes(4).toString('hex');
/** `cm-keybase-<pid>-<instance>-XXXXXX` and `cm-cli-…`: the owner is in the name. */
const TEMP_FOLDER_RE = /^cm-(?:keybase|cli)-(\d+)-([0-9a-f]{8})-/;

/** The name prefix of this process's temporary folders of one kind. */
export function ownTempFolderPrefix(kind: 'keybase' | 'cli'): string {
  return `cm-${kind}-${process.pid}-${INSTANCE}-`;
}

/** Whether a process with this pid exists (EPERM: it exists but is not ours). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error: unknown) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What a finished CLI call left behind. */
interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}
const MAX_BUFFER = 1024 * 1024;

/** Removes anything that looks like key material (long hex runs) from CLI output. */
export function scrubOutput(text: string): string {
  const clean = text.replace(/[0-9a-fA-F]{64,}/g, '[redacted]').trim();
  return clean.length > 400 ? `${clean.slice(0, 399)}…` : clean;
}

const GO_LOG_RE = /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d (.+)$/m;

/**
 * Why a CLI call failed, in one line: cobra's `Error: …` (the usage after it is left out),
 * else a Go `log.Fatal` line on stderr, else the message of a fatal/error JSON log line p1 wrote
 * on stdout, else the first line of whatever it printed. Key material is scrubbed.
 */
export function failureReason(stdout: string, stderr: string): string {
  const cobra = /^Error: (.+)$/m.exec(stderr)?.[1];
  if (cobra !== undefined) return scrubOutput(cobra);
  const goLog = GO_LOG_RE.exec(stderr)?.[1];
  if (goLog !== undefined) return scrubOutput(goLog);
  for (const line of stdout.split('\n').reverse()) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { level?: unknown; error?: unknown; message?: unknown };
      if (entry.level === 'fatal' || entry.level === 'error') {
        const parts = [entry.message, entry.error].filter((p) => typeof p === 'string');
        return scrubOutput(parts.join(': '));
      }
    } catch {
      // not a log line
    }
  }
  const first = (stderr.trim() || stdout.trim()).split('\n', 1)[0] ?? '';
  return scrubOutput(first) || '(no output)';
}

export class CliChainAdapter implements ChainAdapter {
  readonly transport: TransportCapabilities = {
    name: 'cli',
    // p1 signs each call with a nonce of its own: a second call is a second transaction.
    resendsSameBytes: false,
    // Killed at its time limit, p1 may already have broadcast the transaction.
    maybeSentCodes: [PocketErrors.CLI_TIMEOUT.code],
    // Any other failure of p1 is read from its exit and output: nothing was broadcast.
    retryableMaySend: false,
    viewTrigger: 'p1 Debug TriggerView',
  };
  readonly #options: CliChainAdapterOptions;
  readonly #processes = new Slots(CLI_PROCESSES);

  constructor(options: CliChainAdapterOptions) {
    this.#options = options;
  }

  prepare(_request: TxRequest): PreparedTx {
    return {}; // the CLI signs with its own random nonce; the hash is learnt from the chain
  }

  /**
   * Removes the temporary folders (keybases holding a key) of managers that were killed before
   * they could remove them; folders of live processes, this one included, are left alone.
   * Returns how many were removed.
   */
  async removeLeftovers(): Promise<number> {
    const root = this.#tempRoot();
    const entries = await readdir(root).catch(() => [] as string[]);
    let removed = 0;
    for (const entry of entries) {
      const match = TEMP_FOLDER_RE.exec(entry);
      if (match === null) continue;
      const pid = Number(match[1]);
      const stale = pid === process.pid ? match[2] !== INSTANCE : !processExists(pid);
      if (!stale) continue;
      await rm(join(root, entry), { recursive: true, force: true });
      removed += 1;
    }
    return removed;
  }

  #tempRoot(): string {
    return this.#options.tempRoot ?? tmpdir();
  }

  #makeTempFolder(kind: 'keybase' | 'cli'): Promise<string> {
    return mkdtemp(join(this.#tempRoot(), ownTempFolderPrefix(kind)));
  }

  /**
   * Holds one of the CLI_PROCESSES slots for the whole call: the key reaches the disk only once
   * the call may run, and its two processes (import, then the transaction) follow each other.
   */
  send(request: TxRequest, _prepared: PreparedTx, signal: AbortSignal): Promise<SendOutcome> {
    return this.#inSlot(() => this.#send(request, signal), signal);
  }

  async #send(request: TxRequest, signal: AbortSignal): Promise<SendOutcome> {
    const dir = await this.#makeTempFolder('keybase');
    try {
      const dataDir = join(dir, '.pocket');
      const keyFile = join(dir, 'key');
      await writeFile(keyFile, pocketKey(request.key).exportPrivateKeyHex(), {
        mode: 0o600,
        flag: 'wx',
      });
      const imported = await this.#run(
        dir,
        [
          '--data_dir',
          dataDir,
          '--non_interactive=true',
          'Keys',
          'Import',
          '--input_file',
          keyFile,
          '--import_format',
          'raw',
        ],
        signal,
      );
      await rm(keyFile, { force: true });
      if (imported.exitCode !== 0 && !/already/i.test(`${imported.stdout}\n${imported.stderr}`)) {
        throw new ManagerError(
          PocketErrors.CLI_FAILED,
          `the CLI could not import the key: ${failureReason(imported.stdout, imported.stderr)}`,
        );
      }
      const address = request.key.address;
      const args =
        request.kind === ActionKind.stake
          ? [
              'Validator',
              'Stake',
              address,
              request.stake.amount,
              relayChainsOf(request.stake).join(','),
              request.serviceUrl,
            ]
          : ['Validator', 'Unstake', address];
      const result = await this.#run(
        dir,
        [
          '--data_dir',
          dataDir,
          `--remote_cli_url=${this.#options.rpcUrl}`,
          '--non_interactive=true',
          ...args,
        ],
        signal,
      );
      return interpret(result, request.kind);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  resend(_record: ActionRecord, _signal: AbortSignal): undefined {
    return undefined; // a new CLI call signs a new transaction: not idempotent
  }

  triggerView(signal: AbortSignal): Promise<void> {
    return this.#inSlot(() => this.#triggerView(signal), signal);
  }

  async #triggerView(signal: AbortSignal): Promise<void> {
    const dir = await this.#makeTempFolder('cli');
    try {
      const result = await this.#run(
        dir,
        [
          `--remote_cli_url=${this.#options.rpcUrl}`,
          '--non_interactive=true',
          'Debug',
          'TriggerView',
        ],
        signal,
      );
      if (result.exitCode !== 0)
        throw new ManagerError(
          PocketErrors.CLI_FAILED,
          `Debug TriggerView failed: ${failureReason(result.stdout, result.stderr)}`,
        );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Runs `call` in one of the slots; cancelled while it waits, it fails as CANCELLED. */
  async #inSlot<T>(call: () => Promise<T>, signal: AbortSignal): Promise<T> {
    try {
      return await this.#processes.run(call, signal);
    } catch (error: unknown) {
      if (signal.aborted && !(error instanceof ManagerError))
        throw new ManagerError('CANCELLED', 'the CLI call was cancelled before it started');
      throw error;
    }
  }

  async #run(home: string, args: string[], signal: AbortSignal): Promise<CliResult> {
    const { configPath, genesisPath } = this.#options;
    // Loaded on the first call, not at start: execa is 111 modules that RPC mode never runs.
    const { execa } = await import('execa');
    const result = await execa(this.#options.cliPath, args, {
      shell: false,
      extendEnv: false,
      env: {
        HOME: home,
        PATH: this.#options.path ?? process.env.PATH ?? '/usr/bin:/bin',
        // Node's compile cache, when the manager has one: lets a Node CLI such as the devnet's
        // localnet-cli start without type-stripping its sources on every call (0.68 → 0.36 CPU
        // s). V1's Go p1 ignores it. Nothing else of the manager's env is passed.
        ...(process.env.NODE_COMPILE_CACHE === undefined
          ? {}
          : { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE }),
        ...(configPath === undefined ? {} : { CONFIG_PATH: configPath }),
        ...(genesisPath === undefined ? {} : { GENESIS_PATH: genesisPath }),
        // p1's Debug commands build a P2P listen address from the config's `p2p.hostname`, even
        // as a client, and exit 1 ("Failed to create p2p module") on the chart's "" (values.yaml:98;
        // p2p/module.go:106-112). V1's own cli-client sets this for exactly that
        // (build/localnet/manifests/cli-client.yaml:84-86). It applies where the config names the
        // key, as the chart's does (viper's AutomaticEnv, runtime/configs/config.go:53-58).
        POCKET_P2P_HOSTNAME: '127.0.0.1',
      },
      cwd: home,
      stdin: 'ignore',
      timeout: this.#options.timeoutMs,
      forceKillAfterDelay: KILL_AFTER_MS,
      maxBuffer: MAX_BUFFER,
      cancelSignal: signal,
      reject: false,
      stripFinalNewline: true,
    });
    if (result.isCanceled) throw new ManagerError('CANCELLED', 'the CLI call was cancelled');
    if (result.timedOut)
      throw new ManagerError(
        PocketErrors.CLI_TIMEOUT,
        `the CLI did not finish within ${this.#options.timeoutMs} ms`,
      );
    if (result.isMaxBuffer)
      throw new ManagerError(PocketErrors.CLI_FAILED, 'the CLI wrote more output than allowed');
    if (result.exitCode === undefined) {
      // `code` names why it could not start (EACCES: not executable, ENOENT: no such file).
      throw new ManagerError(
        PocketErrors.CLI_FAILED,
        `the CLI could not run or was killed (${result.code ?? result.signal ?? 'no exit code'})`,
      );
    }
    return {
      exitCode: result.exitCode,
      stdout: result.stdout,
      stderr: result.stderr,
    };
  }
}

/** Reads `p1`'s outcome: the status line, then the body (a V1 error text on failure). */
function interpret(result: CliResult, kind: string): SendOutcome {
  const stdout = result.stdout;
  if (result.exitCode !== 0) {
    throw new ManagerError(
      PocketErrors.CLI_FAILED,
      `the CLI exited with ${result.exitCode}: ${failureReason(stdout, result.stderr)}`,
    );
  }
  const match = STATUS_RE.exec(stdout);
  if (match?.[1] === undefined)
    throw new ManagerError(
      PocketErrors.CLI_FAILED,
      `the CLI printed no HTTP status: ${scrubOutput(stdout)}`,
    );
  const status = Number(match[1]);
  if (status === 200) return 'admitted';
  const v1 = parseV1ErrorText((match[2] ?? '').trim());
  if (v1?.code === V1Code.duplicateTransaction) return 'in-mempool';
  if (v1?.code === V1Code.transactionAlreadyCommitted) return 'committed';
  if (v1 !== undefined) {
    throw new ManagerError(
      'TX_REJECTED',
      `the node refused the ${kind}: V1 error ${v1.code} (${v1.detail})`,
      { details: { v1Code: v1.code } },
    );
  }
  throw new ManagerError(
    PocketErrors.CLI_FAILED,
    `the node answered the ${kind} with HTTP ${status}: ${scrubOutput(match[2] ?? '')}`,
  );
}

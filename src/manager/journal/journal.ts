// The action journal (node:sqlite): every action is written before it is sent and updated as it
// progresses, so a restarted manager resumes what was in flight instead of sending it again.
// At most one open (prepared or sent) action per validator, enforced by a unique index. It also
// keeps the settings that outlive a restart, the hooks' runs, and when each validator's current
// key was first seen (by its address; a key itself is never written here).
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, renameSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { Clock } from '../clock.ts';
import { ManagerError } from '../errors.ts';
import { journalError } from './journal-errors.ts';
import {
  ActionState,
  type ActionKind,
  type ActionRecord,
  type KeyObservation,
  type ValidatorId,
} from '../model.ts';

/** The actions table (a transport's name is the chain's label: no fixed set). */
const ACTIONS_TABLE = (name: string) => `
CREATE TABLE IF NOT EXISTS ${name} (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  validator_id TEXT NOT NULL,
  address TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('stake', 'unstake')),
  state TEXT NOT NULL CHECK (state IN ('prepared', 'sent', 'committed', 'failed', 'dropped')),
  mode TEXT NOT NULL CHECK (mode <> ''),
  tx_hash TEXT,
  tx_hex TEXT,
  nonce TEXT,
  fingerprint TEXT NOT NULL,
  reason TEXT NOT NULL,
  prepared_height INTEGER NOT NULL,
  sent_height INTEGER,
  committed_height INTEGER,
  result_code INTEGER,
  error_code TEXT,
  error TEXT,
  terminal INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);`;

const SCHEMA = `${ACTIONS_TABLE('actions')}
CREATE UNIQUE INDEX IF NOT EXISTS actions_one_open ON actions (validator_id) WHERE state IN ('prepared', 'sent');
CREATE INDEX IF NOT EXISTS actions_by_validator ON actions (validator_id, seq);
CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS hook_runs (
  action_key TEXT NOT NULL,
  hook TEXT NOT NULL,
  point TEXT NOT NULL,
  validator_id TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('running', 'succeeded', 'failed', 'interrupted')),
  attempts INTEGER NOT NULL DEFAULT 0,
  error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (action_key, hook)
);
CREATE TABLE IF NOT EXISTS key_observations (
  validator_id TEXT PRIMARY KEY,
  address TEXT NOT NULL,
  observed_at TEXT NOT NULL
);
`;

/**
 * The journal file's schema version (`PRAGMA user_version`). 0: the first files, which did not
 * say which chain they were written for; 1: the chain is recorded in `settings` (`chain.id`,
 * `chain.genesis-hash`); 2: the table `key_observations` (when each id's current key was first
 * seen); 3: an action's `mode` (its transport's name) is any name the chain gives, no longer one of
 * a fixed pair. Opening migrates an older file in place; a newer one is refused.
 */
export const JOURNAL_SCHEMA_VERSION = 3;

/** The chain a journal was written for. */
export interface ChainIdentity {
  /** The chain's id (V1: a block header's `network_id`). */
  chainId: string;
  /** The hash the first block builds on (V1: block 1's `prev_state_hash`). */
  genesisHash: string;
}

/** A journal file this code cannot use (written by a newer version): left untouched. */
export class JournalVersionError extends ManagerError {
  constructor(path: string, version: number) {
    super(
      'JOURNAL_UNAVAILABLE',
      `the journal ${path} has schema version ${version}, newer than this cluster-manager's ${JOURNAL_SCHEMA_VERSION}; use a newer cluster-manager or another CM_JOURNAL_PATH`,
      { details: { path } },
    );
    this.name = 'JournalVersionError';
  }
}

const CHAIN_ID_SETTING = 'chain.id';
const GENESIS_HASH_SETTING = 'chain.genesis-hash';

interface Row {
  seq: number;
  validator_id: string;
  address: string;
  kind: string;
  state: string;
  mode: string;
  tx_hash: string | null;
  tx_hex: string | null;
  nonce: string | null;
  fingerprint: string;
  reason: string;
  prepared_height: number;
  sent_height: number | null;
  committed_height: number | null;
  result_code: number | null;
  error_code: string | null;
  error: string | null;
  terminal: number;
  attempts: number;
  created_at: string;
  updated_at: string;
}

function toRecord(row: Row): ActionRecord {
  return {
    seq: row.seq,
    validatorId: row.validator_id,
    address: row.address,
    kind: row.kind as ActionKind,
    state: row.state as ActionState,
    mode: row.mode,
    txHash: row.tx_hash ?? undefined,
    txHex: row.tx_hex ?? undefined,
    nonce: row.nonce ?? undefined,
    fingerprint: row.fingerprint,
    reason: row.reason,
    preparedHeight: row.prepared_height,
    sentHeight: row.sent_height ?? undefined,
    committedHeight: row.committed_height ?? undefined,
    resultCode: row.result_code ?? undefined,
    errorCode: row.error_code ?? undefined,
    error: row.error ?? undefined,
    terminal: row.terminal === 1,
    attempts: row.attempts,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** One hook's run for one action (the table `hook_runs`). */
export interface HookRunRecord {
  actionKey: string;
  hook: string;
  point: string;
  validatorId: ValidatorId;
  state: 'running' | 'succeeded' | 'failed' | 'interrupted';
  attempts: number;
  error: string | undefined;
  createdAt: string;
  updatedAt: string;
}

interface HookRunRow {
  action_key: string;
  hook: string;
  point: string;
  validator_id: string;
  state: string;
  attempts: number;
  error: string | null;
  created_at: string;
  updated_at: string;
}

function toHookRun(row: HookRunRow): HookRunRecord {
  return {
    actionKey: row.action_key,
    hook: row.hook,
    point: row.point,
    validatorId: row.validator_id,
    state: row.state as HookRunRecord['state'],
    attempts: row.attempts,
    error: row.error ?? undefined,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

interface KeyObservationRow {
  validator_id: string;
  address: string;
  observed_at: string;
}

export interface PrepareInput {
  validatorId: ValidatorId;
  address: string;
  kind: ActionKind;
  /** The transport's name (the chain's label; stored as it is). */
  mode: string;
  txHash?: string | undefined;
  txHex?: string | undefined;
  nonce?: string | undefined;
  fingerprint: string;
  reason: string;
  preparedHeight: number;
}

/** Options of a write. */
export interface WriteOptions {
  /**
   * Group commit: the write runs now (it is visible to this journal's reads at once) inside the
   * current tick's transaction, which commits, with one fsync for every write of the tick, in a
   * `setImmediate` callback; `committed()` resolves then. A caller that needs the write on disk
   * before an effect (an action before its send) awaits `committed()` first.
   */
  grouped?: boolean;
}

/**
 * Durable record of actions. A write is synchronous and committed before it returns, unless it is
 * grouped (see `WriteOptions`) or a group is open: then it is committed with that group, before
 * the end of the current turn of the event loop.
 */
export class Journal {
  #db: DatabaseSync;
  readonly #path: string;
  readonly #clock: Clock;
  readonly #statements = new Map<string, StatementSync>();
  #group:
    | {
        committed: Promise<void>;
        resolve: () => void;
        reject: (e: unknown) => void;
        /** A write of the group failed (SQLite may have rolled the whole transaction back). */
        failure?: ManagerError;
      }
    | undefined;
  readonly #groupFailureListeners: ((error: unknown) => void)[] = [];

  readonly #maxBytes: number | undefined;

  private constructor(db: DatabaseSync, path: string, clock: Clock, maxBytes: number | undefined) {
    this.#db = db;
    this.#path = path;
    this.#clock = clock;
    this.#maxBytes = maxBytes;
  }

  get path(): string {
    return this.#path;
  }

  /** A compiled statement, compiled once per journal. */
  #sql(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Opens the tick's group transaction if none is open. */
  #joinGroup(): void {
    if (this.#group !== undefined) return;
    this.#guard('write', () => this.#db.exec('BEGIN IMMEDIATE'));
    let resolve!: () => void;
    let reject!: (e: unknown) => void;
    const committed = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // A rejection nobody awaits (only unawaited writes in the group) is reported to the
    // failure listeners, not as an unhandled rejection.
    committed.catch(() => undefined);
    this.#group = { committed, resolve, reject };
    setImmediate(() => this.flush());
  }

  /** Resolves once every write made so far is on disk (at once when no group is open). */
  committed(): Promise<void> {
    return this.#group?.committed ?? Promise.resolve();
  }

  /** Commits the open group now, if any. A failed commit rolls the group back and rejects. */
  flush(): void {
    const group = this.#group;
    if (group === undefined) return;
    this.#group = undefined;
    try {
      // SQLITE_FULL (and a few others) roll the transaction back by themselves: the group is gone,
      // and its failure is that write's, not COMMIT's "no transaction is active".
      if (!this.#db.isTransaction && group.failure !== undefined) throw group.failure;
      this.#db.exec('COMMIT');
    } catch (cause: unknown) {
      if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
      const error = journalError(cause, this.#path, 'write');
      group.reject(error);
      for (const listener of this.#groupFailureListeners) listener(error);
      return;
    }
    group.resolve();
  }

  /** Called when a group's commit failed: its writes are gone from the file (rolled back). */
  onGroupFailure(listener: (error: unknown) => void): void {
    this.#groupFailureListeners.push(listener);
  }

  /**
   * Opens (creating if needed) the journal at `path`; `:memory:` for a throw-away one. An older
   * file is migrated to JOURNAL_SCHEMA_VERSION; a newer one throws JournalVersionError. A file that
   * is damaged or not a journal throws JOURNAL_CORRUPT (checked whole, `PRAGMA quick_check`);
   * any other failure JOURNAL_FULL or JOURNAL_UNAVAILABLE, naming the file and SQLite's words.
   * `maxBytes`: writes that would grow the file past it fail with JOURNAL_FULL.
   */
  static open(path: string, clock: Clock, options: { maxBytes?: number } = {}): Journal {
    return new Journal(openDatabase(path, options.maxBytes), path, clock, options.maxBytes);
  }

  /** The chain this journal was written for; undefined until it is known. */
  chain(): ChainIdentity | undefined {
    const chainId = this.getSetting(CHAIN_ID_SETTING);
    const genesisHash = this.getSetting(GENESIS_HASH_SETTING);
    return chainId === undefined || genesisHash === undefined
      ? undefined
      : { chainId, genesisHash };
  }

  /** Records the chain this journal is written for. */
  bindChain(chain: ChainIdentity): void {
    this.flush();
    this.#guard('write', () => {
      this.#db.exec('BEGIN IMMEDIATE');
      try {
        this.setSetting(CHAIN_ID_SETTING, chain.chainId);
        this.setSetting(GENESIS_HASH_SETTING, chain.genesisHash);
        this.#db.exec('COMMIT');
      } catch (error: unknown) {
        if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
        throw error;
      }
    });
  }

  /**
   * Sets this journal's file aside — renamed to `<path>.<label>-<time>` (with its -wal and -shm,
   * if any) — and continues on a new, empty file at the same path. Returns the new name.
   */
  setAside(label: string): string {
    if (this.#path === ':memory:') throw new Error('an in-memory journal has no file to set aside');
    this.flush();
    this.#db.close(); // checkpoints the WAL into the file
    this.#statements.clear();
    const stamp = new Date(this.#clock.now()).toISOString().replace(/[:.]/g, '-');
    const aside = `${this.#path}.${label}-${stamp}`;
    for (const suffix of ['', '-wal', '-shm'])
      if (existsSync(this.#path + suffix)) renameSync(this.#path + suffix, aside + suffix);
    this.#db = openDatabase(this.#path, this.#maxBytes);
    return aside;
  }

  close(): void {
    if (!this.#db.isOpen) return;
    this.flush();
    this.#db.close();
  }

  #now(): string {
    return new Date(this.#clock.now()).toISOString();
  }

  /**
   * Runs a write: inside the tick's group when grouped; otherwise committed before it returns
   * (when a group is open, the write joins it and the group is committed at once).
   */
  #write<T>(options: WriteOptions | undefined, write: () => T): T {
    if (options?.grouped === true) {
      this.#joinGroup();
      try {
        return this.#guard('write', write);
      } catch (error: unknown) {
        if (this.#group !== undefined) this.#group.failure ??= error as ManagerError;
        throw error;
      }
    }
    if (this.#group === undefined) return this.#guard('write', write);
    try {
      return this.#guard('write', write);
    } finally {
      this.flush();
    }
  }

  /** Runs `work`; a failure of SQLite is thrown as a catalogue error naming this file. */
  #guard<T>(doing: string, work: () => T): T {
    try {
      return work();
    } catch (error: unknown) {
      throw journalError(error, this.#path, doing);
    }
  }

  /** Writes a new open action. Throws if the validator already has one (a bug upstream). */
  prepare(input: PrepareInput, options?: WriteOptions): ActionRecord {
    return this.#write(options, () => this.#insert(input));
  }

  #insert(input: PrepareInput): ActionRecord {
    const now = this.#now();
    const result = this.#sql(
      `INSERT INTO actions (validator_id, address, kind, state, mode, tx_hash, tx_hex, nonce, fingerprint, reason,
           prepared_height, created_at, updated_at)
         VALUES (?, ?, ?, 'prepared', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      input.validatorId,
      input.address,
      input.kind,
      input.mode,
      input.txHash ?? null,
      input.txHex ?? null,
      input.nonce ?? null,
      input.fingerprint,
      input.reason,
      input.preparedHeight,
      now,
      now,
    );
    return this.get(Number(result.lastInsertRowid)) as ActionRecord;
  }

  #update(
    seq: number,
    fields: Record<string, SQLInputValue>,
    options?: WriteOptions & { countAttempt?: boolean },
  ): ActionRecord {
    return this.#write(options, () => this.#set(seq, fields, options?.countAttempt === true));
  }

  #set(seq: number, fields: Record<string, SQLInputValue>, countAttempt: boolean): ActionRecord {
    const names = Object.keys(fields);
    const sets = names.map((name) => `${name} = ?`);
    if (countAttempt) sets.push('attempts = attempts + 1');
    this.#sql(`UPDATE actions SET ${sets.join(', ')}, updated_at = ? WHERE seq = ?`).run(
      ...names.map((name) => fields[name] ?? null),
      this.#now(),
      seq,
    );
    const record = this.get(seq);
    if (record === undefined) throw new Error(`journal entry ${seq} does not exist`);
    return record;
  }

  /** The node admitted the transaction (or the CLI reported success). */
  markSent(
    seq: number,
    details: { height: number; txHash?: string | undefined },
    options?: WriteOptions,
  ): ActionRecord {
    return this.#update(
      seq,
      {
        state: ActionState.sent,
        sent_height: details.height,
        ...(details.txHash === undefined ? {} : { tx_hash: details.txHash }),
      },
      { ...options, countAttempt: true },
    );
  }

  /** Counts a re-broadcast of the same bytes. */
  markResent(seq: number, height: number): ActionRecord {
    return this.#update(seq, { sent_height: height }, { countAttempt: true });
  }

  /** Records the hash of a CLI-sent transaction once it has been found on chain or in the mempool. */
  recordHash(seq: number, txHash: string): ActionRecord {
    return this.#update(seq, { tx_hash: txHash });
  }

  /** The transaction is in a committed block; `resultCode` 0 = applied. */
  markCommitted(
    seq: number,
    details: { height: number; resultCode: number; txHash?: string | undefined },
    options?: WriteOptions,
  ): ActionRecord {
    return this.#update(
      seq,
      {
        state: ActionState.committed,
        committed_height: details.height,
        result_code: details.resultCode,
        ...(details.txHash === undefined ? {} : { tx_hash: details.txHash }),
      },
      options,
    );
  }

  /** The action failed; `terminal` parks the validator until its inputs change. */
  markFailed(
    seq: number,
    details: { code: string; message: string; terminal: boolean; resultCode?: number },
    options?: WriteOptions,
  ): ActionRecord {
    return this.#update(
      seq,
      {
        state: ActionState.failed,
        error_code: details.code,
        error: details.message,
        terminal: details.terminal ? 1 : 0,
        ...(details.resultCode === undefined ? {} : { result_code: details.resultCode }),
      },
      options,
    );
  }

  /** The transaction never made it into a block and is no longer anywhere; a new one may be sent. */
  markDropped(seq: number, message: string): ActionRecord {
    return this.#update(seq, {
      state: ActionState.dropped,
      error_code: 'TX_DROPPED',
      error: message,
    });
  }

  get(seq: number): ActionRecord | undefined {
    const row = this.#sql('SELECT * FROM actions WHERE seq = ?').get(seq) as Row | undefined;
    return row === undefined ? undefined : toRecord(row);
  }

  /** Every open action (prepared or sent). */
  open(): ActionRecord[] {
    return (
      this.#sql(
        "SELECT * FROM actions WHERE state IN ('prepared', 'sent') ORDER BY seq",
      ).all() as unknown as Row[]
    ).map(toRecord);
  }

  /** The newest action of each validator. */
  latestPerValidator(): Map<ValidatorId, ActionRecord> {
    const rows = this.#sql(
      'SELECT a.* FROM actions a JOIN (SELECT validator_id, MAX(seq) AS seq FROM actions GROUP BY validator_id) m ON a.seq = m.seq',
    ).all() as unknown as Row[];
    return new Map(rows.map((row) => [row.validator_id, toRecord(row)]));
  }

  /**
   * Per address, its newest committed, applied stake (by whichever validator id sent it): who
   * staked that row last, read by the key-rotation rule (planner/rotation.ts).
   */
  lastStakePerAddress(): Map<string, ActionRecord> {
    const rows = this.#sql(
      "SELECT a.* FROM actions a JOIN (SELECT address, MAX(seq) AS seq FROM actions WHERE kind = 'stake' AND state = 'committed' AND result_code = 0 GROUP BY address) m ON a.seq = m.seq",
    ).all() as unknown as Row[];
    return new Map(rows.map((row) => [row.address, toRecord(row)]));
  }

  /** The newest committed, applied action of a kind for a validator. */
  lastApplied(validatorId: ValidatorId, kind: ActionKind): ActionRecord | undefined {
    const row = this.#sql(
      "SELECT * FROM actions WHERE validator_id = ? AND kind = ? AND state = 'committed' AND result_code = 0 ORDER BY seq DESC LIMIT 1",
    ).get(validatorId, kind) as Row | undefined;
    return row === undefined ? undefined : toRecord(row);
  }

  /** Actions newest first, `limit` at a time, before sequence number `before` (exclusive). */
  page(options: {
    limit: number;
    before?: number | undefined;
    validatorId?: ValidatorId | undefined;
  }): ActionRecord[] {
    const conditions: string[] = [];
    const args: SQLInputValue[] = [];
    if (options.before !== undefined) {
      conditions.push('seq < ?');
      args.push(options.before);
    }
    if (options.validatorId !== undefined) {
      conditions.push('validator_id = ?');
      args.push(options.validatorId);
    }
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    const rows = this.#sql(`SELECT * FROM actions ${where} ORDER BY seq DESC LIMIT ?`).all(
      ...args,
      options.limit,
    ) as unknown as Row[];
    return rows.map(toRecord);
  }

  count(): number {
    const row = this.#sql('SELECT COUNT(*) AS n FROM actions').get() as { n: number };
    return row.n;
  }

  /** The recorded run of a hook for an action (see hooks/hook-gate.ts), if any. */
  hookRun(actionKey: string, hook: string): HookRunRecord | undefined {
    const row = this.#sql('SELECT * FROM hook_runs WHERE action_key = ? AND hook = ?').get(
      actionKey,
      hook,
    ) as HookRunRow | undefined;
    return row === undefined ? undefined : toHookRun(row);
  }

  /** Hook runs newest first (status and tests). */
  hookRuns(options: { limit: number; validatorId?: ValidatorId | undefined }): HookRunRecord[] {
    const rows = (options.validatorId === undefined
      ? this.#sql('SELECT * FROM hook_runs ORDER BY updated_at DESC, rowid DESC LIMIT ?').all(
          options.limit,
        )
      : this.#sql(
          'SELECT * FROM hook_runs WHERE validator_id = ? ORDER BY updated_at DESC, rowid DESC LIMIT ?',
        ).all(options.validatorId, options.limit)) as unknown as HookRunRow[];
    return rows.map(toHookRun);
  }

  /**
   * Records that a hook is about to run for an action (committed before it returns: a manager
   * killed during the run finds it `running` at restart), counting the attempt.
   */
  startHookRun(input: {
    actionKey: string;
    hook: string;
    point: string;
    validatorId: ValidatorId;
  }): HookRunRecord {
    const now = this.#now();
    this.#write(undefined, () =>
      this.#sql(
        `INSERT INTO hook_runs (action_key, hook, point, validator_id, state, attempts, created_at, updated_at)
           VALUES (?, ?, ?, ?, 'running', 1, ?, ?)
           ON CONFLICT(action_key, hook) DO UPDATE SET state = 'running', attempts = attempts + 1,
             error = NULL, updated_at = excluded.updated_at`,
      ).run(input.actionKey, input.hook, input.point, input.validatorId, now, now),
    );
    return this.hookRun(input.actionKey, input.hook) as HookRunRecord;
  }

  /** Records how a hook run ended. */
  finishHookRun(
    actionKey: string,
    hook: string,
    outcome: { state: 'succeeded' | 'failed' | 'interrupted'; error?: string | undefined },
  ): HookRunRecord {
    this.#write(undefined, () =>
      this.#sql(
        'UPDATE hook_runs SET state = ?, error = ?, updated_at = ? WHERE action_key = ? AND hook = ?',
      ).run(outcome.state, outcome.error ?? null, this.#now(), actionKey, hook),
    );
    return this.hookRun(actionKey, hook) as HookRunRecord;
  }

  /** Every recorded key observation, by validator id. */
  keyObservations(): Map<ValidatorId, KeyObservation> {
    const rows = this.#sql(
      'SELECT validator_id, address, observed_at FROM key_observations',
    ).all() as unknown as KeyObservationRow[];
    const out = new Map<ValidatorId, KeyObservation>();
    for (const row of rows) {
      const observedAt = Date.parse(row.observed_at);
      // An unreadable time is no record: the key counts as seen when it is next observed.
      if (!Number.isNaN(observedAt))
        out.set(row.validator_id, { address: row.address, observedAt });
    }
    return out;
  }

  /** Records key observations (replacing each id's earlier one), in one commit. */
  recordKeyObservations(observations: ReadonlyMap<ValidatorId, KeyObservation>): void {
    if (observations.size === 0) return;
    this.flush();
    this.#guard('write', () => {
      this.#db.exec('BEGIN IMMEDIATE');
      try {
        const upsert = this.#sql(
          `INSERT INTO key_observations (validator_id, address, observed_at) VALUES (?, ?, ?)
             ON CONFLICT(validator_id) DO UPDATE SET address = excluded.address, observed_at = excluded.observed_at`,
        );
        for (const [id, observation] of observations)
          upsert.run(id, observation.address, new Date(observation.observedAt).toISOString());
        this.#db.exec('COMMIT');
      } catch (error: unknown) {
        if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
        throw error;
      }
    });
  }

  getSetting(name: string): string | undefined {
    const row = this.#sql('SELECT value FROM settings WHERE name = ?').get(name) as
      { value: string } | undefined;
    return row?.value;
  }

  setSetting(name: string, value: string): void {
    this.#write(undefined, () =>
      this.#sql(
        'INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value',
      ).run(name, value),
    );
  }
}

/** Opens the database, applies the schema, and migrates an older file (see JOURNAL_SCHEMA_VERSION). */
function openDatabase(path: string, maxBytes: number | undefined): DatabaseSync {
  let db: DatabaseSync | undefined;
  try {
    db = openChecked(path, maxBytes);
    return migrated(db, path);
  } catch (error: unknown) {
    if (db?.isOpen === true) db.close();
    if (error instanceof JournalVersionError) throw error;
    throw journalError(error, path, 'open');
  }
}

/** The open database, its settings applied and its pages checked. */
function openChecked(path: string, maxBytes: number | undefined): DatabaseSync {
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true });
    restrictToOwner(path);
  }
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;');
  if (maxBytes !== undefined) {
    const page = (db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size;
    db.exec(`PRAGMA max_page_count = ${Math.max(1, Math.floor(maxBytes / page))}`);
  }
  const check = db.prepare('PRAGMA quick_check').all() as { quick_check: string }[];
  if (check.length !== 1 || check[0]?.quick_check !== 'ok')
    throw new ManagerError(
      'JOURNAL_CORRUPT',
      `could not open the journal ${path}: ${check
        .slice(0, 3)
        .map((row) => row.quick_check)
        .join(
          '; ',
        )} (the file is damaged); move it aside (or delete it) and start again: a new journal is rebuilt from the chain`,
      { details: { path } },
    );
  return db;
}

function migrated(db: DatabaseSync, path: string): DatabaseSync {
  const version = (db.prepare('PRAGMA user_version').get() as { user_version: number })
    .user_version;
  if (version > JOURNAL_SCHEMA_VERSION) throw new JournalVersionError(path, version);
  db.exec(SCHEMA);
  // 0 → 1: the tables are unchanged; the chain is recorded in `settings` once known (a file of
  // version 0 has none, and is checked against the chain by its committed actions).
  // 1 → 2: SCHEMA adds the empty table `key_observations`: every key is then first seen at the
  // next start (the conservative answer; docs/adr/0022).
  // 2 → 3: the actions table is rebuilt without the fixed set of modes (rows kept as they are).
  if (version < 3) widenModes(db, path);
  if (version < JOURNAL_SCHEMA_VERSION) db.exec(`PRAGMA user_version = ${JOURNAL_SCHEMA_VERSION}`);
  return db;
}

/**
 * Rebuilds a table written before version 3, whose `mode` had to be one of a fixed pair, with the
 * open check of ACTIONS_TABLE: SQLite cannot change a column's check in place. One transaction:
 * the rows, their sequence numbers and the table's next sequence number are kept.
 */
function widenModes(db: DatabaseSync, path: string): void {
  const table = db
    .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'actions'")
    .get() as { sql: string } | undefined;
  if (table === undefined || !/CHECK \(mode IN \(/.test(table.sql)) return;
  const next = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'actions'").get() as
    { seq: number } | undefined;
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec(ACTIONS_TABLE('actions_v3'));
    db.exec('INSERT INTO actions_v3 SELECT * FROM actions');
    db.exec('DROP TABLE actions');
    db.exec('ALTER TABLE actions_v3 RENAME TO actions');
    if (next !== undefined)
      db.prepare("UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = 'actions'").run(
        next.seq,
      );
    db.exec(SCHEMA); // the indexes went with the old table
    db.exec('COMMIT');
  } catch (error: unknown) {
    db.exec('ROLLBACK');
    // The copy needs room for the table twice: a file past half its size limit (or its volume)
    // cannot be upgraded in place, and the message says what the step was.
    throw journalError(
      error,
      path,
      `upgrade (from version 2, which copies its actions table once: it needs room for it twice)`,
    );
  }
}

/**
 * The journal holds signed transactions: only its owner may read it (0600). The file is created
 * with that mode before SQLite opens it, so SQLite gives its -wal and -shm files the same mode (it
 * copies the database's permissions); files of an older journal are narrowed too.
 */
function restrictToOwner(path: string): void {
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`])
    if (existsSync(file)) chmodSync(file, 0o600);
}

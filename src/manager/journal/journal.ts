// The action journal (node:sqlite): every action is written before it is sent and updated as it
// progresses, so a restarted manager resumes what was in flight instead of sending it again.
// At most one open (prepared or sent) action per validator, enforced by a unique index.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import type { Clock } from '../clock.ts';
import { ActionState, type ActionKind, type ActionRecord, type ValidatorId } from '../model.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS actions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  validator_id TEXT NOT NULL,
  address TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('stake', 'unstake')),
  state TEXT NOT NULL CHECK (state IN ('prepared', 'sent', 'committed', 'failed', 'dropped')),
  mode TEXT NOT NULL CHECK (mode IN ('rpc', 'cli')),
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
);
CREATE UNIQUE INDEX IF NOT EXISTS actions_one_open ON actions (validator_id) WHERE state IN ('prepared', 'sent');
CREATE INDEX IF NOT EXISTS actions_by_validator ON actions (validator_id, seq);
CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

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
    mode: row.mode as 'rpc' | 'cli',
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

export interface PrepareInput {
  validatorId: ValidatorId;
  address: string;
  kind: ActionKind;
  mode: 'rpc' | 'cli';
  txHash?: string | undefined;
  txHex?: string | undefined;
  nonce?: string | undefined;
  fingerprint: string;
  reason: string;
  preparedHeight: number;
}

/** Durable record of actions. All writes are synchronous and committed before they return. */
export class Journal {
  readonly #db: DatabaseSync;
  readonly #clock: Clock;

  private constructor(db: DatabaseSync, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  /** Opens (creating if needed) the journal at `path`; `:memory:` for a throw-away one. */
  static open(path: string, clock: Clock): Journal {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const db = new DatabaseSync(path);
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;');
    db.exec(SCHEMA);
    return new Journal(db, clock);
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }

  #now(): string {
    return new Date(this.#clock.now()).toISOString();
  }

  /** Writes a new open action. Throws if the validator already has one (a bug upstream). */
  prepare(input: PrepareInput): ActionRecord {
    const now = this.#now();
    const result = this.#db
      .prepare(
        `INSERT INTO actions (validator_id, address, kind, state, mode, tx_hash, tx_hex, nonce, fingerprint, reason,
           prepared_height, created_at, updated_at)
         VALUES (?, ?, ?, 'prepared', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
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

  #update(seq: number, fields: Record<string, SQLInputValue>): ActionRecord {
    const names = Object.keys(fields);
    const sets = names.map((name) => `${name} = ?`).join(', ');
    this.#db
      .prepare(`UPDATE actions SET ${sets}, updated_at = ? WHERE seq = ?`)
      .run(...names.map((name) => fields[name] ?? null), this.#now(), seq);
    const record = this.get(seq);
    if (record === undefined) throw new Error(`journal entry ${seq} does not exist`);
    return record;
  }

  /** The node admitted the transaction (or the CLI reported success). */
  markSent(seq: number, details: { height: number; txHash?: string | undefined }): ActionRecord {
    return this.#update(seq, {
      state: ActionState.sent,
      sent_height: details.height,
      ...(details.txHash === undefined ? {} : { tx_hash: details.txHash }),
      attempts: (this.get(seq)?.attempts ?? 0) + 1,
    });
  }

  /** Counts a re-broadcast of the same bytes. */
  markResent(seq: number, height: number): ActionRecord {
    return this.#update(seq, { sent_height: height, attempts: (this.get(seq)?.attempts ?? 0) + 1 });
  }

  /** Records the hash of a CLI-sent transaction once it has been found on chain or in the mempool. */
  recordHash(seq: number, txHash: string): ActionRecord {
    return this.#update(seq, { tx_hash: txHash });
  }

  /** The transaction is in a committed block; `resultCode` 0 = applied. */
  markCommitted(
    seq: number,
    details: { height: number; resultCode: number; txHash?: string | undefined },
  ): ActionRecord {
    return this.#update(seq, {
      state: ActionState.committed,
      committed_height: details.height,
      result_code: details.resultCode,
      ...(details.txHash === undefined ? {} : { tx_hash: details.txHash }),
    });
  }

  /** The action failed; `terminal` parks the validator until its inputs change. */
  markFailed(
    seq: number,
    details: { code: string; message: string; terminal: boolean; resultCode?: number },
  ): ActionRecord {
    return this.#update(seq, {
      state: ActionState.failed,
      error_code: details.code,
      error: details.message,
      terminal: details.terminal ? 1 : 0,
      ...(details.resultCode === undefined ? {} : { result_code: details.resultCode }),
    });
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
    const row = this.#db.prepare('SELECT * FROM actions WHERE seq = ?').get(seq) as Row | undefined;
    return row === undefined ? undefined : toRecord(row);
  }

  /** Every open action (prepared or sent). */
  open(): ActionRecord[] {
    return (
      this.#db
        .prepare("SELECT * FROM actions WHERE state IN ('prepared', 'sent') ORDER BY seq")
        .all() as unknown as Row[]
    ).map(toRecord);
  }

  /** The newest action of each validator. */
  latestPerValidator(): Map<ValidatorId, ActionRecord> {
    const rows = this.#db
      .prepare(
        'SELECT a.* FROM actions a JOIN (SELECT validator_id, MAX(seq) AS seq FROM actions GROUP BY validator_id) m ON a.seq = m.seq',
      )
      .all() as unknown as Row[];
    return new Map(rows.map((row) => [row.validator_id, toRecord(row)]));
  }

  /** The newest committed, applied action of a kind for a validator. */
  lastApplied(validatorId: ValidatorId, kind: ActionKind): ActionRecord | undefined {
    const row = this.#db
      .prepare(
        "SELECT * FROM actions WHERE validator_id = ? AND kind = ? AND state = 'committed' AND result_code = 0 ORDER BY seq DESC LIMIT 1",
      )
      .get(validatorId, kind) as Row | undefined;
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
    const rows = this.#db
      .prepare(`SELECT * FROM actions ${where} ORDER BY seq DESC LIMIT ?`)
      .all(...args, options.limit) as unknown as Row[];
    return rows.map(toRecord);
  }

  count(): number {
    const row = this.#db.prepare('SELECT COUNT(*) AS n FROM actions').get() as { n: number };
    return row.n;
  }

  getSetting(name: string): string | undefined {
    const row = this.#db.prepare('SELECT value FROM settings WHERE name = ?').get(name) as
      { value: string } | undefined;
    return row?.value;
  }

  setSetting(name: string, value: string): void {
    this.#db
      .prepare(
        'INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value',
      )
      .run(name, value);
  }
}

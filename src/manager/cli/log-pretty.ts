// `logs --pretty`: pino's JSON lines (the nodes' and the manager's logs) as one readable line
// each — time, level, message, then the other fields as key=value. Our own few lines rather than
// pino-pretty (ADR 0027): the CLI ships in the image as a bundle, and pino-pretty would bring a
// dozen runtime packages for this. A line that is not pino's JSON passes as it is.
import { Transform, type TransformCallback } from 'node:stream';

const LEVELS: Readonly<Record<number, string>> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
/** ANSI colours of the level word on a terminal. */
const COLOURS: Readonly<Record<string, string>> = {
  TRACE: '90',
  DEBUG: '36',
  INFO: '32',
  WARN: '33',
  ERROR: '31',
  FATAL: '35',
};
/** pino's own fields, shown in the line's head or not at all. */
const HEAD = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'v']);
/** `kubectl logs --timestamps`' prefix: an RFC 3339 time and a space. */
const STAMP = /^(\d{4}-\d\d-\d\dT[\d:.]+Z )(.*)$/s;

export interface PrettyOptions {
  /** Colour the level (a terminal that did not ask for NO_COLOR). */
  color: boolean;
}

/** `HH:MM:SS.mmm` in UTC of a pino time (epoch ms, or an ISO string). */
function clock(time: unknown): string {
  const date = new Date(typeof time === 'number' || typeof time === 'string' ? time : NaN);
  return Number.isNaN(date.getTime()) ? '--:--:--.---' : date.toISOString().slice(11, 23);
}

function value(field: unknown): string {
  if (typeof field === 'string') return /^[^\s"=]+$/.test(field) ? field : JSON.stringify(field);
  if (field !== null && typeof field === 'object' && 'message' in field && 'type' in field)
    return JSON.stringify(`${String(field.type)}: ${String(field.message)}`);
  return JSON.stringify(field); // a parsed JSON value: never undefined
}

/** One log line made readable (without its newline); anything but a pino object as it is. */
export function prettyLine(line: string, options: PrettyOptions): string {
  const stamped = STAMP.exec(line);
  const prefix = stamped?.[1] ?? '';
  const body = stamped?.[2] ?? line;
  if (!body.startsWith('{')) return line;
  let entry: Record<string, unknown>;
  try {
    const parsed = JSON.parse(body) as unknown;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return line;
    entry = parsed as Record<string, unknown>;
  } catch {
    return line;
  }
  const name =
    LEVELS[Number(entry.level)] ??
    (typeof entry.level === 'string' ? entry.level.toUpperCase() : '?');
  const level = options.color
    ? `\u001b[${COLOURS[name] ?? '0'}m${name.padEnd(5)}\u001b[0m`
    : name.padEnd(5);
  const rest = Object.entries(entry)
    .filter(([key]) => !HEAD.has(key))
    .map(([key, field]) => `${key}=${value(field)}`);
  const message = typeof entry.msg === 'string' ? entry.msg : '';
  return [`${prefix}${clock(entry.time)}`, level, message, ...rest]
    .filter((part) => part !== '')
    .join(' ');
}

/** A stream that makes each line it passes readable (lines may arrive cut across chunks). */
export class PrettyLines extends Transform {
  readonly #options: PrettyOptions;
  #partial = '';

  constructor(options: PrettyOptions) {
    super();
    this.#options = options;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const text = this.#partial + chunk.toString('utf8');
    const lines = text.split('\n');
    this.#partial = lines.pop() ?? '';
    for (const line of lines) this.push(`${prettyLine(line, this.#options)}\n`);
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.#partial !== '') this.push(prettyLine(this.#partial, this.#options));
    done();
  }
}

/** A whole log text made readable, line by line. */
export function prettyText(text: string, options: PrettyOptions): string {
  return text
    .split('\n')
    .map((line, i, all) => (i === all.length - 1 && line === '' ? '' : prettyLine(line, options)))
    .join('\n');
}

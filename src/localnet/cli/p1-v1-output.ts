// What p1's Go runtime prints when it gives up, for localnet-cli's v1 mode: the standard
// library's `log.Fatal` line on stderr (`2006/01/02 15:04:05 msg`), and V1's global zerolog
// logger, which writes JSON lines to stdout (logger/module.go:49-53), e.g. p1's `main` after a
// command failed: {"level":"fatal","error":"…","time":"…","message":"failed to execute command"}.

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** Go's `log` prefix (LstdFlags): local date and time. */
function logPrefix(now: Date): string {
  return (
    `${now.getFullYear()}/${pad(now.getMonth() + 1)}/${pad(now.getDate())} ` +
    `${pad(now.getHours())}:${pad(now.getMinutes())}:${pad(now.getSeconds())}`
  );
}

/** `time.RFC3339` in local time: `2006-01-02T15:04:05Z07:00`. */
function rfc3339(now: Date): string {
  const offset = -now.getTimezoneOffset();
  const zone =
    offset === 0
      ? 'Z'
      : `${offset > 0 ? '+' : '-'}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return (
    `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}T` +
    `${pad(now.getHours())}:${pad(now.getMinutes())}:${pad(now.getSeconds())}${zone}`
  );
}

/** The line `log.Fatalf` writes to stderr before exit 1. */
export function goLogLine(message: string, now = new Date()): string {
  return `${logPrefix(now)} ${message}\n`;
}

/**
 * A zerolog JSON line of V1's global logger (field order: level, error, time, message), or of a
 * module's logger (`CreateLoggerForModule`: a `module` field after the level, logger/module.go:60-63).
 * zerolog's global level starts at debug (v1.27.0) and p1 never sets it, so debug lines print.
 */
export function zerologLine(
  level: 'fatal' | 'error' | 'info' | 'debug',
  message: string,
  error?: string,
  options: { module?: string; now?: Date } = {},
): string {
  const fields: Record<string, string> = { level };
  if (options.module !== undefined) fields.module = options.module;
  if (error !== undefined) fields.error = error;
  fields.time = rfc3339(options.now ?? new Date());
  fields.message = message;
  return `${JSON.stringify(fields)}\n`;
}

/** Ends p1 the way Go's `log.Fatal` or zerolog's `Fatal()` does: output, then exit 1. */
export class GoFatal extends Error {
  readonly stdout: string;
  readonly stderr: string;
  constructor(output: { stdout?: string; stderr?: string }) {
    super('fatal');
    this.name = 'GoFatal';
    this.stdout = output.stdout ?? '';
    this.stderr = output.stderr ?? '';
  }
}

/** `log.Fatalf(format)`: stderr, exit 1. */
export function logFatal(message: string): GoFatal {
  return new GoFatal({ stderr: goLogLine(message) });
}

/** `logger.Global.Fatal().Err(err).Msg(message)`: stdout, exit 1. */
export function zerologFatal(message: string, error?: string): GoFatal {
  return new GoFatal({ stdout: zerologLine('fatal', message, error) });
}

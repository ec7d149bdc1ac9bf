// The one root logger (pino, JSON lines). Components take children of it; nothing imports a
// logger singleton. Key-bearing fields are redacted wherever they appear.
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config.ts';

export type { Logger };

/** Paths redacted in every log line: anything that could carry a private key or a token. */
export const REDACT_PATHS = [
  'key',
  'privateKey',
  'private_key',
  'seed',
  'secret',
  'token',
  'authorization',
  'env',
  'data',
  'stringData',
  '*.key',
  '*.privateKey',
  '*.private_key',
  '*.seed',
  '*.secret',
  '*.token',
  '*.authorization',
  '*.env',
  '*.data',
  '*.stringData',
  'req.headers.authorization',
];

export interface CreateLoggerOptions {
  level: LogLevel;
  /** Where lines go (default: stdout). Tests pass a capturing stream. */
  destination?: DestinationStream;
  name?: string;
}

/** A run of hex as long as a private key (64 bytes) or longer: a key or raw transaction bytes. */
const LONG_HEX = /[0-9a-fA-F]{128,}/g;

/**
 * pino's error serializer, with anything as long as a private key cut out of the message and the
 * stack: an error logged under `err` never carries a key, whatever its cause quoted.
 */
export function serializeError(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown;
  return JSON.parse(JSON.stringify(serialized).replace(LONG_HEX, '[redacted]')) as unknown;
}

export function createLogger(options: CreateLoggerOptions): Logger {
  return pino(
    {
      name: options.name ?? 'cluster-manager',
      level: options.level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: serializeError },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    options.destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

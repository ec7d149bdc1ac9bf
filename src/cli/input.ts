// Reading command input that must stay out of argv (keys): standard input or a private file.
import { readFile } from 'node:fs/promises';
import { UsageError } from './program.ts';

/** Reads all of standard input as UTF-8. */
export async function readStdin(stdin: NodeJS.ReadableStream = process.stdin): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** Strips the one line ending that `echo`, `printf '%s\n'` and editors add; nothing else. */
export function stripFinalNewline(text: string): string {
  return text.replace(/\r?\n$/, '');
}

/**
 * Resolves an argument that names where a secret comes from: `-` for standard input, otherwise a
 * file path. A value that looks like the secret itself is refused, so it never sits in shell
 * history or `/proc/<pid>/cmdline`.
 */
export async function readSecretArgument(source: string, what: string): Promise<string> {
  if (source === '-') return stripFinalNewline(await readStdin());
  if (/^[0-9a-fA-F]{64,}$/.test(source)) {
    throw new UsageError(
      `pass the ${what} on standard input (\`-\`) or as a file path, not on the command line`,
    );
  }
  try {
    return stripFinalNewline(await readFile(source, 'utf8'));
  } catch (error: unknown) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(`cannot read the ${what} from ${JSON.stringify(source)} (${code})`);
  }
}

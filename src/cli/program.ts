// Shared command-line plumbing: a commander program whose usage errors exit 2 with one line,
// and the exit codes every entry point uses.
import { Command, CommanderError } from 'commander';

/** Exit codes scripts can rely on (documented in docs/cli.md). */
export const ExitCode = {
  ok: 0,
  failed: 1,
  usage: 2,
  timedOut: 3,
  /** Stopped by Ctrl-C (SIGINT): 128 + 2, as a shell reports it. */
  interrupted: 130,
  /** Stopped by SIGTERM: 128 + 15. */
  terminated: 143,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** An error whose message is safe to print as the one-line reason for `exitCode`. */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode = ExitCode.failed) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** A usage problem the parser could not catch (bad value, missing input). Exits 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.usage);
    this.name = 'UsageError';
  }
}

/**
 * A root command configured so that every subcommand gets `--help`, an unknown command or
 * option exits 2 with one `error: … (run with --help for usage)` line, and no stack trace ever
 * reaches the terminal.
 */
export function createProgram(name: string, description: string, version?: string): Command {
  const program = new Command(name);
  if (version !== undefined) program.version(version, '-V, --version', 'print the version');
  program
    .description(description)
    // One line per error, hint included, so a script's log shows the whole reason at once.
    .configureOutput({
      outputError: (text, write) =>
        write(`${text.trim().replace(/\s*\n\s*/g, ' ')} (run with --help for usage)\n`),
    })
    .configureHelp({ sortSubcommands: true, showGlobalOptions: true })
    .exitOverride();
  return program;
}

/**
 * An "Examples:" block for `addHelpText('after', …)`: each command with what it does. Every
 * command of a program shows some, so `--help` answers "what do I type".
 */
export function examples(lines: readonly (readonly [command: string, what: string])[]): string {
  const width = Math.max(...lines.map(([command]) => command.length));
  return `\nExamples:\n${lines.map(([command, what]) => `  $ ${command.padEnd(width)}  # ${what}`).join('\n')}\n`;
}

/**
 * Parses argv and runs the chosen action, mapping every failure to an exit code.
 * Only `CliError` messages are printed as they are; anything else is reported generically,
 * because an unexpected error's message may carry input (for instance key material).
 */
export async function runProgram(program: Command, argv: readonly string[]): Promise<never> {
  applyExitOverride(program);
  // A reader that went away (`… | head`) ends the program quietly, as for any Unix filter.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(ExitCode.ok);
  });
  try {
    await program.parseAsync(argv);
    return process.exit(process.exitCode ?? ExitCode.ok);
  } catch (error: unknown) {
    return process.exit(reportFailure(error));
  }
}

function applyExitOverride(command: Command): void {
  command.exitOverride();
  for (const sub of command.commands) applyExitOverride(sub);
}

function reportFailure(error: unknown): ExitCode {
  if (error instanceof CommanderError) {
    if (error.exitCode === 0) return ExitCode.ok; // --help, --version
    return ExitCode.usage; // commander has already printed its one-line message
  }
  if (error instanceof CliError) {
    process.stderr.write(`error: ${error.message}\n`);
    return error.exitCode;
  }
  const name = error instanceof Error ? error.name : typeof error;
  process.stderr.write(`error: unexpected ${name}; rerun with DEBUG=cluster-manager for details\n`);
  if (process.env.DEBUG?.includes('cluster-manager') === true && error instanceof Error) {
    process.stderr.write(`${error.stack ?? ''}\n`);
  }
  return ExitCode.failed;
}

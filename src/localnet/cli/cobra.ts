// A small emulation of cobra v1.6.0 + pflag v1.0.5 (the CLI framework of V1's `p1`), so that
// localnet-cli in its v1 mode parses and prints as p1 does: the command lookup and argument
// checks, flags anywhere on the line, `help` and `-h`, the help and usage templates
// (command.go:531-582), pflag's flag listing (flag.go FlagUsagesWrapped), and the failure
// output: `Error: …` then the usage on stderr.
export type FlagType = 'string' | 'bool' | 'int64';

export interface FlagDef {
  name: string;
  shorthand?: string;
  type: FlagType;
  default: string | boolean | number;
  usage: string;
}

export type FlagValues = Map<string, string | boolean | number>;

export interface RunContext {
  args: string[];
  flags: FlagValues;
  /** Flags given on the command line (pflag's `Changed`). */
  changed: ReadonlySet<string>;
  command: CobraCommand;
}

export interface CommandDef {
  /** `Name rest…`: the name is the first word. */
  use: string;
  short?: string;
  long?: string;
  aliases?: string[];
  /** cobra's `Args` check: returns the error text, or undefined. */
  args?: (args: readonly string[], command: CobraCommand) => string | undefined;
  flags?: FlagDef[];
  persistentFlags?: FlagDef[];
  persistentPreRun?: (context: RunContext) => Promise<void> | void;
  run?: (context: RunContext) => Promise<void> | void;
  children?: CommandDef[];
}

/** cobra's `ExactArgs(n)`. */
export const exactArgs =
  (n: number) =>
  (args: readonly string[]): string | undefined =>
    args.length === n ? undefined : `accepts ${n} arg(s), received ${args.length}`;

/** cobra's `MaximumNArgs(n)`. */
export const maximumNArgs =
  (n: number) =>
  (args: readonly string[]): string | undefined =>
    args.length <= n ? undefined : `accepts at most ${n} arg(s), received ${args.length}`;

export class CobraCommand {
  readonly def: CommandDef;
  readonly parent: CobraCommand | undefined;
  readonly children: CobraCommand[];

  constructor(def: CommandDef, parent?: CobraCommand) {
    this.def = def;
    this.parent = parent;
    // cobra sorts commands by name (EnableCommandSorting): byte order, upper case first.
    this.children = (def.children ?? [])
      .map((child) => new CobraCommand(child, this))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  get name(): string {
    return this.def.use.split(' ', 1)[0] ?? '';
  }

  get path(): string {
    return this.parent === undefined ? this.name : `${this.parent.path} ${this.name}`;
  }

  get runnable(): boolean {
    return this.def.run !== undefined;
  }

  get root(): CobraCommand {
    return this.parent?.root ?? this;
  }

  /** Runnable, or a group with something runnable in it (cobra's IsAvailableCommand). */
  get available(): boolean {
    return this.runnable || this.children.some((c) => c.available || c.name === 'help');
  }

  find(word: string): CobraCommand | undefined {
    return this.children.find((c) => c.name === word || (c.def.aliases ?? []).includes(word));
  }

  #helpFlag(): FlagDef {
    return {
      name: 'help',
      shorthand: 'h',
      type: 'bool',
      default: false,
      usage: `help for ${this.name}`,
    };
  }

  /** Flags declared here (local and persistent) and the help flag. */
  localFlags(): FlagDef[] {
    return [...(this.def.flags ?? []), ...(this.def.persistentFlags ?? []), this.#helpFlag()];
  }

  /** Persistent flags of the ancestors. */
  inheritedFlags(): FlagDef[] {
    const out: FlagDef[] = [];
    for (let p = this.parent; p !== undefined; p = p.parent) {
      for (const flag of p.def.persistentFlags ?? []) {
        if (!out.some((f) => f.name === flag.name)) out.push(flag);
      }
    }
    return out;
  }

  allFlags(): FlagDef[] {
    return [...this.localFlags(), ...this.inheritedFlags()];
  }

  // --- output ---------------------------------------------------------------------------

  useLine(): string {
    const line = this.parent === undefined ? this.def.use : `${this.parent.path} ${this.def.use}`;
    return line.includes('[flags]') ? line : `${line} [flags]`;
  }

  /** cobra's usage template (command.go:539-568). */
  usage(): string {
    let out = 'Usage:';
    if (this.runnable) out += `\n  ${this.useLine()}`;
    const commands = this.children.filter((c) => c.available || c.name === 'help');
    if (commands.length > 0) out += `\n  ${this.path} [command]`;
    const aliases = this.def.aliases ?? [];
    if (aliases.length > 0) out += `\n\nAliases:\n  ${[this.name, ...aliases].join(', ')}`;
    if (commands.length > 0) {
      const padding = Math.max(11, ...this.children.map((c) => c.name.length));
      out += '\n\nAvailable Commands:';
      for (const c of commands) out += `\n  ${c.name.padEnd(padding)} ${c.def.short ?? ''}`;
    }
    out += `\n\nFlags:\n${flagUsages(this.localFlags())}`;
    const inherited = this.inheritedFlags();
    if (inherited.length > 0) out += `\n\nGlobal Flags:\n${flagUsages(inherited)}`;
    if (commands.length > 0) {
      out += `\n\nUse "${this.path} [command] --help" for more information about a command.`;
    }
    return `${out}\n`;
  }

  /** cobra's help template (command.go:580-582). */
  help(): string {
    const text = (this.def.long ?? this.def.short ?? '').trimEnd();
    return `${text === '' ? '' : `${text}\n\n`}${this.usage()}`;
  }
}

/** pflag's `FlagUsagesWrapped(0)`: sorted by name, usages aligned one column past the longest. */
export function flagUsages(flags: readonly FlagDef[]): string {
  const rows = [...flags]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((flag) => {
      let left =
        flag.shorthand === undefined
          ? `      --${flag.name}`
          : `  -${flag.shorthand}, --${flag.name}`;
      const varname = flag.type === 'bool' ? '' : flag.type === 'int64' ? 'int' : 'string';
      if (varname !== '') left += ` ${varname}`;
      let usage = flag.usage;
      const zero = flag.type === 'bool' ? false : flag.type === 'int64' ? 0 : '';
      if (flag.default !== zero) {
        usage +=
          flag.type === 'string'
            ? ` (default ${JSON.stringify(flag.default)})`
            : ` (default ${String(flag.default)})`;
      }
      return { left, usage };
    });
  const width = Math.max(...rows.map((r) => r.left.length));
  return rows.map((r) => `${r.left.padEnd(width)}   ${r.usage}`).join('\n');
}

// --- parsing and running -------------------------------------------------------------------

/** Where the run ended, and what cobra and p1's `main` print for it. */
export type CobraOutcome =
  | { kind: 'ok' }
  | { kind: 'help'; text: string }
  /** A RunE error, a flag or argument error: `Error: …` + usage on stderr, then p1 exits 1. */
  | { kind: 'error'; message: string; usage: string }
  /** An unknown command: `Error: …` + `Run '<path> --help' for usage.` on stderr. */
  | { kind: 'unknown'; message: string; path: string };

/** A failure cobra prints as `Error: <message>` (+ usage). */
export class CobraError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CobraError';
  }
}

/** cobra's `stripFlags`: the words that are not flags or a flag's value. */
function positional(args: readonly string[], flags: readonly FlagDef[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--') break;
    if (arg.startsWith('--') && !arg.includes('=')) {
      const flag = flags.find((f) => f.name === arg.slice(2));
      if (flag?.type !== 'bool') i++;
    } else if (arg.startsWith('-') && arg.length === 2 && arg !== '-') {
      const flag = flags.find((f) => f.shorthand === arg.slice(1));
      if (flag?.type !== 'bool') i++;
    } else if (!arg.startsWith('-') || arg === '-') {
      out.push(arg);
    }
  }
  return out;
}

/** pflag's parse: values for every flag (defaults first) and the positional arguments. */
function parseFlags(
  args: readonly string[],
  flags: readonly FlagDef[],
): { values: FlagValues; changed: Set<string>; rest: string[] } {
  const values: FlagValues = new Map(flags.map((f) => [f.name, f.default]));
  const changed = new Set<string>();
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg === '--') {
      rest.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      rest.push(arg);
      continue;
    }
    const long = arg.startsWith('--');
    const [name, inline] = long
      ? (arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined])
      : [arg.slice(1, 2), arg.length > 2 ? arg.slice(2).replace(/^=/, '') : undefined];
    const flag = flags.find((f) => (long ? f.name === name : f.shorthand === name));
    if (flag === undefined) {
      throw new CobraError(
        long ? `unknown flag: --${name}` : `unknown shorthand flag: '${name}' in ${arg}`,
      );
    }
    const shown = long ? `--${flag.name}` : `-${flag.shorthand}, --${flag.name}`;
    let text = inline;
    if (text === undefined && flag.type !== 'bool') {
      if (i + 1 >= args.length) throw new CobraError(`flag needs an argument: ${arg}`);
      text = args[++i];
    }
    values.set(flag.name, convert(flag, text ?? 'true', shown));
    changed.add(flag.name);
  }
  return { values, changed, rest };
}

function convert(flag: FlagDef, text: string, shown: string): string | boolean | number {
  if (flag.type === 'string') return text;
  if (flag.type === 'bool') {
    if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
    if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
    throw new CobraError(
      `invalid argument ${JSON.stringify(text)} for ${JSON.stringify(shown)} flag: strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax`,
    );
  }
  if (!/^[+-]?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new CobraError(
      `invalid argument ${JSON.stringify(text)} for ${JSON.stringify(shown)} flag: strconv.ParseInt: parsing ${JSON.stringify(text)}: ${/^[+-]?\d+$/.test(text) ? 'value out of range' : 'invalid syntax'}`,
    );
  }
  return Number(text);
}

/** Levenshtein distance, case-insensitive (cobra's `ld(a, b, true)`). */
function distance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  let row = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const next = [i];
    for (let j = 1; j <= t.length; j++) {
      next[j] = Math.min(
        (row[j] ?? 0) + 1,
        (next[j - 1] ?? 0) + 1,
        (row[j - 1] ?? 0) + (s[i - 1] === t[j - 1] ? 0 : 1),
      );
    }
    row = next;
  }
  return row[t.length] ?? 0;
}

function suggestions(root: CobraCommand, typed: string): string {
  const found = root.children
    .filter((c) => c.available)
    .filter(
      (c) => distance(typed, c.name) <= 2 || c.name.toLowerCase().startsWith(typed.toLowerCase()),
    )
    .map((c) => `\t${c.name}\n`);
  return found.length === 0 ? '' : `\n\nDid you mean this?\n${found.join('')}`;
}

/** cobra's `ExecuteC`: find the command, parse its flags, check its arguments, run it. */
export async function execute(root: CobraCommand, argv: readonly string[]): Promise<CobraOutcome> {
  let command = root;
  let args = [...argv];
  for (;;) {
    const words = positional(args, command.allFlags());
    const next = words[0] === undefined ? undefined : command.find(words[0]);
    if (next === undefined || words[0] === undefined) break;
    const index = args.indexOf(words[0]);
    args = [...args.slice(0, index), ...args.slice(index + 1)];
    command = next;
  }
  if (
    command.def.args === undefined &&
    command.children.length > 0 &&
    command.parent === undefined
  ) {
    const words = positional(args, command.allFlags());
    if (words[0] !== undefined) {
      return {
        kind: 'unknown',
        message: `unknown command ${JSON.stringify(words[0])} for ${JSON.stringify(command.path)}${suggestions(command, words[0])}`,
        path: command.path,
      };
    }
  }
  const fail = (message: string): CobraOutcome => ({
    kind: 'error',
    message,
    usage: command.usage(),
  });
  let parsed: ReturnType<typeof parseFlags>;
  try {
    parsed = parseFlags(args, command.allFlags());
  } catch (error: unknown) {
    if (error instanceof CobraError) return fail(error.message);
    throw error;
  }
  if (parsed.values.get('help') === true || !command.runnable) {
    return { kind: 'help', text: command.help() };
  }
  const problem = command.def.args?.(parsed.rest, command);
  if (problem !== undefined) return fail(problem);
  const context: RunContext = {
    args: parsed.rest,
    flags: parsed.values,
    changed: parsed.changed,
    command,
  };
  try {
    for (let p: CobraCommand | undefined = command; p !== undefined; p = p.parent) {
      if (p.def.persistentPreRun !== undefined) {
        await p.def.persistentPreRun(context);
        break;
      }
    }
    await command.def.run?.(context);
  } catch (error: unknown) {
    if (error instanceof CobraError) return fail(error.message);
    if (error instanceof HelpRequest) return { kind: 'help', text: error.text };
    throw error;
  }
  return { kind: 'ok' };
}

/** cobra's default `help` command (command.go InitDefaultHelpCmd). */
export function helpCommand(): CommandDef {
  return {
    use: 'help [command]',
    short: 'Help about any command',
    long: 'Help provides help for any command in the application.\nSimply type p1 help [path to command] for full details.',
    run: ({ args, command }) => {
      let target: CobraCommand | undefined = command.root;
      for (const word of args) target = target?.find(word);
      throw new HelpRequest(
        target === undefined
          ? `Unknown help topic [\`${args.join(' ')}\`]\n${command.root.usage()}`
          : target.help(),
      );
    },
  };
}

/** Thrown by the help command to print help (stdout, exit 0). */
export class HelpRequest extends Error {
  readonly text: string;
  constructor(text: string) {
    super('help');
    this.name = 'HelpRequest';
    this.text = text;
  }
}

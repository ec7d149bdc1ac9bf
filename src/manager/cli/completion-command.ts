// `cluster-manager completion bash|zsh|fish`: a completion script generated from the program's
// own command tree (commands, subcommands, options, the values of options with a fixed set), so
// it never drifts from the CLI. The script is static: a TAB does not start Node.
import type { Command } from 'commander';
import { CliError, examples, ExitCode } from '../../cli/program.ts';

/**
 * Values of options whose parser checks a fixed set. Commander's own choices are read too, and so
 * are a parser's `choices` (a parser that carries its set: the devnet's oneOf).
 */
const KNOWN_CHOICES: Record<string, readonly string[]> = {
  '--wait': ['none', 'staked', 'active'],
  '--pacemaker': ['auto', 'manual'],
};

/** The fixed set a parser function carries, if any. */
function parserChoices(parse: unknown): readonly string[] | undefined {
  const choices = (parse as { choices?: unknown } | undefined)?.choices;
  return Array.isArray(choices) && choices.every((c) => typeof c === 'string')
    ? choices
    : undefined;
}

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** Words per command path ('' is the root): subcommands, flags, flags that take a value, values. */
export type WordTable = Map<string, string[]>;

/** Reads the command tree into `"<path>|subs"`, `"<path>|flags"`, `"<path>|valued"`, `"<path>|choices:<flag>"`. */
export function wordTable(program: Command): WordTable {
  const table: WordTable = new Map();
  const visit = (command: Command, path: string): void => {
    const subs = command.commands
      .filter((c) => !(c as unknown as { _hidden?: boolean })._hidden)
      .map((c) => c.name());
    if (path === '') subs.push('help');
    if (path === 'completion') subs.push(...SHELLS);
    const flags: string[] = ['--help'];
    const valued: string[] = [];
    for (const option of command.options) {
      if (option.hidden) continue;
      const names = [option.long, option.short].filter((n): n is string => n !== undefined);
      flags.push(...names);
      if (option.required || option.optional) valued.push(...names);
      const choices =
        option.argChoices ??
        parserChoices(option.parseArg) ??
        (option.long ? KNOWN_CHOICES[option.long] : undefined);
      if (choices !== undefined)
        for (const name of names) table.set(`${path}|choices:${name}`, [...choices]);
    }
    if (subs.length > 0) table.set(`${path}|subs`, subs.sort());
    table.set(`${path}|flags`, [...new Set(flags)].sort());
    if (valued.length > 0) table.set(`${path}|valued`, valued.sort());
    for (const sub of command.commands)
      visit(sub, path === '' ? sub.name() : `${path} ${sub.name()}`);
  };
  visit(program, '');
  return table;
}

function posixCases(table: WordTable, indent: string): string {
  return [...table]
    .map(([key, words]) => `${indent}'${key}') echo '${words.join(' ')}' ;;`)
    .join('\n');
}

/** The script for `shell`, completing the command `name`. */
export function completionScript(program: Command, shell: Shell): string {
  const table = wordTable(program);
  const name = program.name();
  const fn = `_${name.replace(/[^A-Za-z0-9]/g, '_')}`;
  switch (shell) {
    case 'bash':
      return bashScript(name, fn, table);
    case 'zsh':
      return zshScript(name, fn, table);
    case 'fish':
      return fishScript(name, fn, table);
  }
}

/**
 * Both POSIX-like scripts share one candidate function: walk the words typed so far, following
 * subcommands and skipping option values, then offer the values of the option just typed, the
 * flags of the command (when the word starts with `-`), or its subcommands.
 */
function candidates(fn: string, table: WordTable, zsh: boolean): string {
  const test = zsh ? '[[ " $list " == *" $word "* ]]' : '[[ " $list " == *" $word "* ]]';
  return `${fn}_words() {
  case "$1|$2" in
${posixCases(table, '    ')}
  esac
}
# ${fn}_candidates CUR WORD... (the words before CUR, without the command name)
${fn}_candidates() {
  local cur="$1" cmdpath="" word list skip=0 prev=""
  shift
  for word in "$@"; do
    prev="$word"
    if (( skip )); then skip=0; continue; fi
    case "$word" in
      -*=*) ;;
      -*) list="$(${fn}_words "$cmdpath" valued) $(${fn}_words "" valued)"
          if ${test}; then skip=1; fi ;;
      *) list="$(${fn}_words "$cmdpath" subs)"
         if ${test}; then cmdpath="\${cmdpath:+$cmdpath }$word"; fi ;;
    esac
  done
  local choices
  choices="$(${fn}_words "$cmdpath" "choices:$prev")"
  [[ -z "$choices" ]] && choices="$(${fn}_words "" "choices:$prev")"
  if [[ -n "$choices" ]]; then echo "$choices"; return; fi
  if (( skip )); then echo "__files__"; return; fi
  if [[ "$cur" == -* ]]; then
    echo "$(${fn}_words "$cmdpath" flags) $(${fn}_words "" flags)"
  else
    ${fn}_words "$cmdpath" subs
  fi
}`;
}

function bashScript(name: string, fn: string, table: WordTable): string {
  return `# ${name} completion for bash, for \`${name} …\` and \`npx ${name} …\`: save it once from the
# project (npx ${name} completion bash > ~/.${name}.bash) and source that file in ~/.bashrc.
${candidates(fn, table, false)}
# ${fn}_reply CUR WORD... (the words before CUR, after the command name)
${fn}_reply() {
  local cur="$1" words
  words="$(${fn}_candidates "$@")"
  if [[ "$words" == "__files__" ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  fi
}
${fn}() {
  ${fn}_reply "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[@]:1:COMP_CWORD-1}"
}
# npx [its options] ${name} …: the project's own ${name}, from node_modules/.bin. Any other npx
# command line gets bash's default (file names).
${fn}_npx() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" i=1
  while (( i < COMP_CWORD )) && [[ "\${COMP_WORDS[i]}" == -* ]]; do ((i++)); done
  COMPREPLY=()
  if (( i < COMP_CWORD )) && [[ "\${COMP_WORDS[i]}" == ${name} ]]; then
    ${fn}_reply "$cur" "\${COMP_WORDS[@]:i+1:COMP_CWORD-i-1}"
  elif (( i == COMP_CWORD )); then
    COMPREPLY=($(compgen -W "${name}" -- "$cur"))
  fi
}
complete -F ${fn} ${name}
complete -o default -F ${fn}_npx npx
`;
}

function zshScript(name: string, fn: string, table: WordTable): string {
  return `#compdef ${name}
# ${name} completion for zsh, for \`${name} …\` and \`npx ${name} …\`: save it once from the
# project (npx ${name} completion zsh > ~/.${name}.zsh) and source that file in ~/.zshrc, after
# compinit.
${candidates(fn, table, true)}
# ${fn}_reply CUR WORD... (the words before CUR, after the command name)
${fn}_reply() {
  local found
  found="$(${fn}_candidates "$@")"
  if [[ "$found" == "__files__" ]]; then
    _files
  else
    compadd -- \${=found}
  fi
}
${fn}() {
  ${fn}_reply "\${words[CURRENT]}" "\${(@)words[2,CURRENT-1]}"
}
# npx [its options] ${name} …: the project's own ${name}, from node_modules/.bin.
${fn}_npx() {
  local i=2
  while (( i < CURRENT )) && [[ "\${words[i]}" == -* ]]; do (( i++ )); done
  if (( i < CURRENT )) && [[ "\${words[i]}" == ${name} ]]; then
    ${fn}_reply "\${words[CURRENT]}" "\${(@)words[i+1,CURRENT-1]}"
  elif (( i == CURRENT )); then
    compadd -- ${name}
    _files
  else
    _files
  fi
}
compdef ${fn} ${name}
compdef ${fn}_npx npx
`;
}

function fishScript(name: string, fn: string, table: WordTable): string {
  const cases = [...table]
    .map(
      ([key, words]) =>
        `        case '${key}'\n            string split ' ' -- '${words.join(' ')}'`,
    )
    .join('\n');
  return `# ${name} completion for fish, for \`${name} …\` and \`npx ${name} …\`: save it once from the
# project: npx ${name} completion fish > ~/.config/fish/completions/${name}.fish
function ${fn}_words
    switch "$argv[1]|$argv[2]"
${cases}
    end
end

function ${fn}_candidates
    set -l tokens (commandline -opc)
    # After the command word: \`${name} …\` or \`npx [its options] ${name} …\`.
    set -l at (contains -i -- ${name} $tokens); or set at 1
    set -e tokens[1..$at]
    set -l cur (commandline -ct)
    set -l cmdpath ''
    set -l skip 0
    set -l prev ''
    for word in $tokens
        set prev $word
        if test $skip -eq 1
            set skip 0
            continue
        end
        switch $word
            case '-*=*'
            case '-*'
                if contains -- $word (${fn}_words "$cmdpath" valued) (${fn}_words '' valued)
                    set skip 1
                end
            case '*'
                if contains -- $word (${fn}_words "$cmdpath" subs)
                    set cmdpath (string trim -- "$cmdpath $word")
                end
        end
    end
    set -l choices (${fn}_words "$cmdpath" "choices:$prev")
    test (count $choices) -eq 0; and set choices (${fn}_words '' "choices:$prev")
    if test (count $choices) -gt 0
        printf '%s\\n' $choices
    else if test $skip -eq 1
        __fish_complete_path $cur
    else if string match -q -- '-*' $cur
        printf '%s\\n' (${fn}_words "$cmdpath" flags) (${fn}_words '' flags)
    else
        ${fn}_words "$cmdpath" subs
    end
end

complete -c ${name} -f -a '(${fn}_candidates)'
complete -c npx -n '__fish_seen_subcommand_from ${name}' -f -a '(${fn}_candidates)'
complete -c npx -n 'not __fish_seen_subcommand_from ${name}' -a '${name}'
`;
}

export function registerCompletionCommand(program: Command): void {
  program
    .command('completion')
    .description(
      'Print a shell completion script for `cluster-manager` and `npx cluster-manager` (bash, zsh or fish).',
    )
    .argument('<shell>', SHELLS.join(' | '))
    .addHelpText(
      'after',
      examples([
        [
          'npx cluster-manager completion bash > ~/.cluster-manager.bash',
          'bash, in the project; then `source ~/.cluster-manager.bash` in ~/.bashrc',
        ],
        [
          'npx cluster-manager completion zsh > ~/.cluster-manager.zsh',
          'zsh, in the project; then `source ~/.cluster-manager.zsh` in ~/.zshrc, after compinit',
        ],
        [
          'npx cluster-manager completion fish > ~/.config/fish/completions/cluster-manager.fish',
          'fish, in the project',
        ],
      ]) +
        '\nThe scripts complete `cluster-manager …` and `npx cluster-manager …` alike. Write them from the\n' +
        'project folder: elsewhere npx would offer to install an unrelated npm package of that name.\n',
    )
    .action((shell: string) => {
      if (!(SHELLS as readonly string[]).includes(shell))
        throw new CliError(`<shell> must be one of ${SHELLS.join(', ')}`, ExitCode.usage);
      let root = program;
      while (root.parent !== null) root = root.parent;
      process.stdout.write(completionScript(root, shell as Shell));
    });
}

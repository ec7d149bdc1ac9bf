// The `cluster-manager` program as a whole: every command's --help shows examples, every read
// command has --json, --version says the package's version, and the completion table covers
// every command and option of the tree.
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };
import { buildClusterManagerProgram } from '../../src/bin/cluster-manager-program.ts';
import { SETTINGS } from '../../src/manager/config.ts';
import { wordTable } from '../../src/manager/cli/completion-command.ts';
import { runFlagsNeeded } from '../../src/manager/cli/run-command.ts';

/** Every command of the tree with its path ('' for the root). */
function commands(program: Command): [string, Command][] {
  const out: [string, Command][] = [];
  const visit = (command: Command, path: string): void => {
    out.push([path, command]);
    for (const sub of command.commands)
      visit(sub, path === '' ? sub.name() : `${path} ${sub.name()}`);
  };
  visit(program, '');
  return out;
}

function helpOf(command: Command): string {
  let text = '';
  command.configureOutput({ writeOut: (chunk) => (text += chunk) });
  command.outputHelp();
  return text;
}

describe('the cluster-manager program', () => {
  const program = buildClusterManagerProgram(SETTINGS);

  it.each(commands(program).map(([path, command]) => [path || '(root)', command] as const))(
    '`%s --help` shows examples of what to type',
    (_path, command) => {
      const help = helpOf(command);
      expect(help).toMatch(/\nExamples:\n {2}\$ \S/);
    },
  );

  it('has --json on every command that reads (and on scale and trigger-view, for scripts)', () => {
    const byPath = new Map(commands(program));
    for (const path of [
      'status',
      'plan',
      'actions',
      'watch',
      'devnet env',
      'scale',
      'trigger-view',
    ])
      expect(
        byPath.get(path)?.options.some((o) => o.long === '--json'),
        `${path} --json`,
      ).toBe(true);
  });

  it('answers --version with the package version', () => {
    expect(program.version()).toBe(pkg.version);
  });

  it("completes every command, subcommand and option of the tree, and the options' fixed values", () => {
    const table = wordTable(program);
    for (const [path, command] of commands(program)) {
      const subs = table.get(`${path}|subs`) ?? [];
      for (const sub of command.commands)
        expect(subs, `${path} → ${sub.name()}`).toContain(sub.name());
      const flags = table.get(`${path}|flags`) ?? [];
      for (const option of command.options)
        expect(flags, `${path} ${option.flags}`).toContain(option.long ?? option.short);
    }
    expect(table.get('scale|choices:--wait')).toEqual(['none', 'staked', 'active']);
    expect(table.get('devnet|choices:--pacemaker')).toEqual(['auto', 'manual']);
    // The devnet's --tx-mode parser carries its set (the core's table names no chain's modes).
    expect(table.get('devnet|choices:--tx-mode')).toEqual(['rpc', 'cli']);
    expect(table.get('completion|subs')).toEqual(['bash', 'fish', 'zsh']);
    expect(table.get('|valued')).toEqual(
      expect.arrayContaining(['--server', '--token', '--devnet']),
    );
  });
});

describe('runFlagsNeeded', () => {
  it('is true when the arguments name run or completion, or no command (the root help)', () => {
    const argv = (...args: string[]) => ['node', 'cluster-manager.ts', ...args];
    expect(runFlagsNeeded(argv('run'))).toBe(true);
    expect(runFlagsNeeded(argv('run', '--help'))).toBe(true);
    expect(runFlagsNeeded(argv('help', 'run'))).toBe(true);
    expect(runFlagsNeeded(argv('completion', 'bash'))).toBe(true);
    // The root's help (no command, or `help`) lists `run [options]`.
    expect(runFlagsNeeded(argv())).toBe(true);
    expect(runFlagsNeeded(argv('--help'))).toBe(true);
    expect(runFlagsNeeded(argv('help'))).toBe(true);
    expect(runFlagsNeeded(argv('status'))).toBe(false);
    expect(runFlagsNeeded(argv('status', '--help'))).toBe(false);
    expect(runFlagsNeeded(argv('--json', 'status'))).toBe(false);
    expect(runFlagsNeeded(argv('await-departure', 'validator-4'))).toBe(false);
    // The script name itself never counts.
    expect(runFlagsNeeded(['run', 'run', 'status'])).toBe(false);
  });
});

// `cluster-manager completion bash|zsh|fish` (issue 17, item 8), checked by the shells themselves:
// each script is loaded into the real shell and asked for the words of a partly typed command
// line. zsh and fish are skipped, with the reason printed, where they are not installed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../rpc/support/cli.ts';

const has = (shell: string): boolean =>
  spawnSync('sh', ['-c', `command -v ${shell}`], { encoding: 'utf8' }).status === 0;
const noZsh = !has('zsh');
const noFish = !has('fish');
if (noZsh) console.warn('zsh completion tests skipped: zsh is not installed (apt-get install zsh)');
if (noFish)
  console.warn('fish completion tests skipped: fish is not installed (apt-get install fish)');

let dir: string;
const scripts: Record<string, string> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'completion-'));
  for (const shell of ['bash', 'zsh', 'fish']) {
    const result = await runCli(['completion', shell]);
    expect(result.code, result.stderr).toBe(0);
    scripts[shell] = join(dir, `cm.${shell}`);
    writeFileSync(scripts[shell], result.stdout);
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Lines typed so far (the last word is being completed) and what must be offered. */
const CASES: [typed: string, offered: string[]][] = [
  ['sc', ['scale']],
  ['scale 6 --wait ', ['active', 'none', 'staked']],
  ['scale 6 --d', ['--devnet', '--drive']],
  ['--server http://m:1 sta', ['status']],
  ['devnet ', ['env', 'reset']],
  ['devnet --pacemaker m', ['manual']],
  ['completion ', ['bash', 'fish', 'zsh']],
  ['logs 005 --t', ['--tail', '--timestamps', '--token']],
];

function run(shell: string, script: string): string[] {
  const result = spawnSync(shell, ['-c', script], { encoding: 'utf8', timeout: 20_000 });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout.split('\n').filter((w) => w !== '');
}

describe('completion', () => {
  it.each(CASES)('bash completes `cluster-manager %s`', (typed, offered) => {
    const words = ['cluster-manager', ...typed.split(' ')];
    const quoted = words.map((w) => `'${w}'`).join(' ');
    const got = run(
      'bash',
      `source '${scripts.bash}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _cluster_manager; printf '%s\\n' "\${COMPREPLY[@]}"`,
    );
    expect([...new Set(got)].sort()).toEqual(offered);
  });

  it.skipIf(noZsh).each(CASES)('zsh completes `cluster-manager %s`', (typed, offered) => {
    const words = ['cluster-manager', ...typed.split(' ')];
    const quoted = words.map((w) => `'${w}'`).join(' ');
    // compadd gets every candidate and zsh filters by the typed prefix: do the same here.
    const got = run(
      'zsh',
      `compdef() { :; }; _files() { :; }; compadd() { shift; print -l -- "$@"; }; source '${scripts.zsh}'; words=(${quoted}); CURRENT=${words.length}; _cluster_manager`,
    );
    const prefix = words.at(-1) ?? '';
    expect([...new Set(got.filter((w) => w.startsWith(prefix)))].sort()).toEqual(offered);
  });

  it.skipIf(noFish).each(CASES)('fish completes `cluster-manager %s`', (typed, offered) => {
    const got = run('fish', `source '${scripts.fish}'; complete -C 'cluster-manager ${typed}'`);
    expect([...new Set(got.map((line) => line.split('\t')[0]))].sort()).toEqual(offered);
  });
});

// The CLI of a project is `npx cluster-manager` (node_modules/.bin is not on PATH): the same words
// after it, with or without npx's own options; npx's first word offers cluster-manager.
const NPX_CASES: [typed: string, offered: string[]][] = [
  ...CASES.map(([typed, offered]): [string, string[]] => [`cluster-manager ${typed}`, offered]),
  ['--no-install cluster-manager scale 6 --wait a', ['active']],
  ['cluster-m', ['cluster-manager']],
];

describe('completion of npx cluster-manager', () => {
  it.each(NPX_CASES)('bash completes `npx %s`', (typed, offered) => {
    const words = ['npx', ...typed.split(' ')];
    const quoted = words.map((w) => `'${w}'`).join(' ');
    const got = run(
      'bash',
      `source '${scripts.bash}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _cluster_manager_npx; printf '%s\\n' "\${COMPREPLY[@]}"`,
    );
    expect([...new Set(got)].sort()).toEqual(offered);
  });

  it('bash registers the npx completion with file names as the fallback', () => {
    const got = run('bash', `source '${scripts.bash}'; complete -p npx`);
    expect(got).toEqual(['complete -o default -F _cluster_manager_npx npx']);
  });

  it.skipIf(noZsh).each(NPX_CASES)('zsh completes `npx %s`', (typed, offered) => {
    const words = ['npx', ...typed.split(' ')];
    const quoted = words.map((w) => `'${w}'`).join(' ');
    const got = run(
      'zsh',
      `compdef() { :; }; _files() { :; }; compadd() { [[ "$1" == -- ]] && shift; print -l -- "$@"; }; source '${scripts.zsh}'; words=(${quoted}); CURRENT=${words.length}; _cluster_manager_npx`,
    );
    const prefix = words.at(-1) ?? '';
    expect([...new Set(got.filter((w) => w.startsWith(prefix)))].sort()).toEqual(offered);
  });

  it.skipIf(noFish).each(NPX_CASES)('fish completes `npx %s`', (typed, offered) => {
    const got = run('fish', `source '${scripts.fish}'; complete -C 'npx ${typed}'`);
    const words = new Set(got.map((line) => line.split('\t')[0]));
    // npx's first word: fish may offer its own candidates too, ours must be among them.
    if (typed === 'cluster-m') expect([...words]).toContain('cluster-manager');
    else expect([...words].sort()).toEqual(offered);
  });
});

// `cluster-manager run` with a bad hooks file: refused at start as a configuration problem (exit
// code 2), each problem named, before anything connects to the cluster or the chain.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/manager/config.ts';
import { startService } from '../../src/manager/run.ts';

const dir = mkdtempSync(join(tmpdir(), 'cm-hooks-start-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string, mode: number): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

async function problems(hooksFile: string): Promise<readonly string[]> {
  const env = {
    CM_CHAIN_RPC_URL: 'http://127.0.0.1:1',
    CM_HOOKS_FILE: hooksFile,
    CM_JOURNAL_PATH: join(dir, 'journal.sqlite'),
    KUBECONFIG: join(dir, 'no-kubeconfig'),
  };
  const error: unknown = await startService({ env }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).problems;
}

describe('a hooks file at start', () => {
  it('is refused when others may write it', async () => {
    const path = file('open.yaml', 'hooks: []\n', 0o666);
    expect(await problems(path)).toEqual([
      `CM_HOOKS_FILE ${path}: the file is writable by users other than its owner (mode 666); chmod go-w it`,
    ]);
  });

  it('names each bad hook: unknown hook, relative path, bad timeout', async () => {
    const path = file(
      'bad.yaml',
      'hooks:\n  - {on: pre-stak, command: [/bin/true]}\n  - {on: post-stake, command: [bin/true]}\n  - {on: readiness, command: [/bin/true], timeoutSeconds: -1}\n',
      0o600,
    );
    expect(await problems(path)).toEqual([
      `CM_HOOKS_FILE ${path}: hooks[0]: unknown hook "pre-stak"; expected one of pre-stake, post-stake, pre-unstake, post-unstake, readiness`,
      `CM_HOOKS_FILE ${path}: hooks[1] (post-stake-1): relative path "bin/true"; use an absolute path`,
      `CM_HOOKS_FILE ${path}: hooks[2] (readiness-1): bad timeoutSeconds -1; expected a number above 0 and at most 3600`,
    ]);
  });
});

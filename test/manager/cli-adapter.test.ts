// The CLI chain adapter's failures name their cause (a CLI that cannot be run at all).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliChainAdapter } from '../../src/manager/chain/cli-adapter.ts';
import { isManagerError } from '../../src/manager/errors.ts';
import { ActionKind } from '../../src/manager/model.ts';
import { generateKeys } from '../../src/pocket/index.ts';

describe('CliChainAdapter', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['not executable', 'EACCES', 0o644],
    ['missing', 'ENOENT', undefined],
  ] as const)('reports a CLI that is %s with the reason (%s)', async (_what, code, mode) => {
    dir = await mkdtemp(join(tmpdir(), 'cli-adapter-'));
    const cliPath = join(dir, 'p1');
    if (mode !== undefined) await writeFile(cliPath, '#!/bin/sh\nexit 0\n', { mode });
    const adapter = new CliChainAdapter({
      cliPath,
      rpcUrl: 'http://127.0.0.1:9',
      timeoutMs: 5_000,
    });
    const [key] = generateKeys({ count: 1, seed: 'cli-adapter' }).values();
    if (key === undefined) throw new Error('no key');
    const request = {
      kind: ActionKind.unstake,
      key,
      amount: '1',
      chains: ['0001'],
      serviceUrl: '',
    };
    const failure = await adapter
      .send(request, adapter.prepare(request), new AbortController().signal)
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(isManagerError(failure) && failure.code).toBe('CLI_FAILED');
    expect((failure as Error).message).toContain(code);
  });
});

// The debug CLI reads a person's `--validator 4` in the id format of the manager's chain, asked
// of the manager (GET /v1/chain) — not Pocket's three digits for every chain (issue 32: on the
// toy chain, whose ids are `val-N`, `actions --validator 4` asked for `004` and found nothing).
// In process, against a real control server over HTTP with a fake control plane behind it.
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildClusterManagerProgram } from '../../src/bin/cluster-manager-program.ts';
import { startControlServer } from '../../src/manager/rpc/server.ts';
import { FakeControlPlane } from '../support/fake-control-plane.ts';

const TOKEN = 'unit-test-token-0123456789abcdef';
const control = new FakeControlPlane();
let server: { url: string; close(): Promise<void> };

beforeAll(async () => {
  server = await startControlServer(
    { control, token: TOKEN, logger: pino({ level: 'silent' }), version: 'unit' },
    { host: '127.0.0.1', port: 0 },
  );
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  control.reset();
  vi.restoreAllMocks();
});

/** Runs `cluster-manager actions --json --validator <text>`; answers the validator asked for. */
async function askedFor(text: string): Promise<string | undefined> {
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  const program = buildClusterManagerProgram([]).exitOverride();
  await program.parseAsync(
    ['actions', '--json', '--validator', text, '--server', server.url, '--token', TOKEN],
    { from: 'user' },
  );
  const call = control.calls.find((c) => c.method === 'actions');
  return call?.method === 'actions' ? call.query.validator : undefined;
}

describe('actions --validator, in the chain’s id format', () => {
  it('on Pocket V1, 4 names 004', async () => {
    expect(await askedFor('4')).toBe('004');
  });

  it('on a chain whose ids are val-N, 4 names val-4 (and val-4 stays val-4)', async () => {
    control.chainAnswer = {
      name: 'toy',
      ids: { prefix: 'val-', width: 0, min: 1, max: 64 },
      stake: '50 utoy',
    };
    expect(await askedFor('4')).toBe('val-4');
    control.calls.length = 0;
    expect(await askedFor('val-4')).toBe('val-4');
  });
});

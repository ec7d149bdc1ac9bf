// What a `cluster-manager` call loads: config.ts's schema (about 700 modules of TypeBox) only when
// the call may use `run`'s flags, and the Pocket key and transaction code only when `keys` or `tx`
// runs. A status, a scale or a pod's preStop hook starts in a fifth of the CPU (docs/testing.md,
// "Timings"). The flags of `run` are still there wherever they can be read. A call to the manager
// goes through node:http, not fetch, whose undici was half of such a process's CPU.
import { describe, expect, it } from 'vitest';
import { runCli } from '../rpc/support/cli.ts';

/** Prints to stderr the URL of every module the process resolves (a Node resolve hook). */
const TRACE = `data:text/javascript,${encodeURIComponent(
  "import{registerHooks}from'node:module';registerHooks({resolve(s,c,n){const r=n(s,c);process._rawDebug('MODULE '+r.url);return r;}});",
)}`;

async function modulesOf(args: string[]): Promise<string[]> {
  const result = await runCli(args, { env: { NODE_OPTIONS: `--import=${TRACE}` } });
  expect(result.code, result.stderr).toBe(0);
  return result.stderr
    .split('\n')
    .filter((line) => line.startsWith('MODULE '))
    .map((line) => line.slice('MODULE '.length));
}

describe('the cluster-manager entry point', () => {
  it.each([
    ['status', '--help'],
    ['await-departure', '--help'],
    ['keys', '--help'],
  ])('`%s %s` loads neither config.ts nor TypeBox, YAML or protobuf', async (...args) => {
    const modules = await modulesOf(args);
    expect(modules.some((url) => url.endsWith('/src/cli/program.ts'))).toBe(true);
    const heavy = modules.filter((url) =>
      /\/src\/manager\/config\.ts$|\/node_modules\/(typebox|yaml|@bufbuild)\//.test(url),
    );
    expect(heavy).toEqual([]);
  });

  it("a call to the manager (a pod's preStop hook) does not load undici: node:http, not fetch", async () => {
    // Lists Node's own modules as the process exits (fetch loads internal/deps/undici).
    const listOnExit = `data:text/javascript,${encodeURIComponent(
      "process.on('exit',()=>process._rawDebug('LOADED '+process.moduleLoadList.join(',')));",
    )}`;
    const result = await runCli(
      [
        'await-departure',
        '--pod',
        'validator-0',
        '--timeout',
        '1',
        '--server',
        'http://127.0.0.1:9',
      ],
      { env: { NODE_OPTIONS: `--import=${listOnExit}` } },
    );
    expect(result.code, result.stderr).toBe(3);
    expect(result.stdout).toContain('(connect ECONNREFUSED 127.0.0.1:9)');
    const loaded = result.stderr.split('\n').find((line) => line.startsWith('LOADED ')) ?? '';
    expect(loaded).toContain('http');
    expect(loaded).not.toContain('undici');
  });

  it.each([
    ['run', '--help'],
    ['help', 'run'],
  ])('`%s %s` lists every flag of run', async (...args) => {
    const result = await runCli(args);
    expect(result.code, result.stderr).toBe(0);
    for (const flag of ['--chain-rpc-url', '--keys-secret', '--rpc-token'])
      expect(result.stdout).toContain(flag);
  });

  it('`--help` lists run with its [options], as before', async () => {
    const result = await runCli(['--help']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^ {2}run \[options\] /m);
  });

  it('`completion bash` offers the flags of run', async () => {
    const result = await runCli(['completion', 'bash']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('--chain-rpc-url');
  });
});

// The departure hook for Pocket V1's validators is bash over /dev/tcp (V1's image has no
// cluster-manager, no curl): the script shipped in k8s/overlays/pocket-v1/validators must keep the
// contract of `cluster-manager await-departure` (docs/control-rpc.md, GET /v1/departures). Both
// run here against the same scripted manager and must end the same way.
import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runBin } from '../support/run-bin.ts';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findObject, kubectlPath, kustomizeBuild, repoRoot } from './support/manifests.ts';
import { noKubectl, withKubectl } from '../support/kubectl-gate.ts';

const set = withKubectl(() =>
  findObject(
    kustomizeBuild('k8s/overlays/pocket-v1/validators'),
    'StatefulSet',
    'validator-001-pocket',
  ),
) as unknown as {
  spec: {
    template: {
      spec: {
        containers: { name: string; lifecycle?: { preStop?: { exec?: { command: string[] } } } }[];
      };
    };
  };
};
/** The hook's bash script, as kustomize builds the patch (read in tests: kubectl needed). */
const script = (): string =>
  set.spec.template.spec.containers.find((c) => c.name === 'pocket')?.lifecycle?.preStop?.exec
    ?.command[2] ?? '';

type Answer = { status: number; body: object; delayMs?: number };

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A manager that answers each request with the next of `answers` (the last one repeats). */
async function manager(answers: Answer[]): Promise<{ url: string; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const created = createServer((request, response) => {
    seen.push(request);
    const answer = answers[Math.min(seen.length - 1, answers.length - 1)]!;
    setTimeout(() => {
      response
        .writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8' })
        .end(JSON.stringify(answer.body));
    }, answer.delayMs ?? 0);
  });
  server = created;
  await new Promise<void>((resolve) => created.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(created.address() as AddressInfo).port}`, seen };
}

function departure(code: string, final: boolean, departed = false, reason = code): object {
  return { pod: 'validator-3', validatorId: '004', departed, final, code, reason, height: 9 };
}

function runScript(env: Record<string, string>): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      '/bin/bash',
      ['-c', script()],
      {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOSTNAME: 'validator-3', ...env },
        timeout: 60_000,
      },
      (error, stdout) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout }),
    );
  });
}

async function runCli(
  env: Record<string, string>,
  timeout: string,
): Promise<{ code: number; output: string }> {
  const result = await runBin('cluster-manager', ['await-departure', '--timeout', timeout], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      POD_NAME: 'validator-3',
      ...env,
    },
  });
  return { code: result.code ?? -1, output: `${result.stdout}${result.stderr}` };
}

describe.skipIf(noKubectl)('the V1 validators’ bash departure hook', { timeout: 90_000 }, () => {
  it('is in the patch', () => {
    expect(script()).toContain('/dev/tcp/');
  });

  it('retries through 503s and non-final answers, then exits 0 on LEFT_SET — as the CLI does', async () => {
    const answers: Answer[] = [
      { status: 503, body: { code: 'NOT_READY' } },
      { status: 200, body: departure('LEAVING', false), delayMs: 300 },
      { status: 200, body: departure('LEFT_SET', true, true) },
    ];
    const { url, seen } = await manager(answers);
    const env = { CLUSTER_MANAGER_URL: url, CLUSTER_MANAGER_TOKEN: 'tok' };
    const script = await runScript({ ...env, DEPARTURE_TIMEOUT_SECONDS: '30' });
    expect(script.code).toBe(0);
    expect(script.stdout).toContain('LEFT_SET');
    expect(seen).toHaveLength(3);
    for (const request of seen) {
      expect(request.url).toMatch(/^\/v1\/departures\/validator-3\?timeoutSeconds=\d+$/);
      expect(request.headers.authorization).toBe('Bearer tok');
    }
    seen.length = 0;
    expect((await runCli(env, '30')).code).toBe(0);
    expect(seen).toHaveLength(3);
  });

  it('exits 0 when the manager says the pod may go although it stays staked', async () => {
    const reason = 'BELOW_MINIMUM_SET: below the minimum set: kept staked';
    const { url } = await manager([
      { status: 200, body: departure('BELOW_MINIMUM_SET', true, false, reason) },
    ]);
    const env = { CLUSTER_MANAGER_URL: url, CLUSTER_MANAGER_TOKEN: 'tok' };
    expect((await runScript({ ...env, DEPARTURE_TIMEOUT_SECONDS: '30' })).code).toBe(0);
    const cli = await runCli(env, '30');
    expect(cli.code).toBe(0);
    // The reason starts with its code (as the planner's does): said once, not twice.
    expect(cli.output).toContain(`validator-3 (004): ${reason} (height 9)`);
  });

  it('exits 1 on a refusal retrying cannot fix (a wrong token)', async () => {
    const { url } = await manager([{ status: 401, body: { code: 'UNAUTHORIZED' } }]);
    const env = { CLUSTER_MANAGER_URL: url, CLUSTER_MANAGER_TOKEN: 'wrong' };
    expect((await runScript({ ...env, DEPARTURE_TIMEOUT_SECONDS: '30' })).code).toBe(1);
    expect((await runCli(env, '30')).code).toBe(1);
  });

  it('keeps trying while nothing answers, and exits 3 at its timeout', async () => {
    const { url } = await manager([{ status: 200, body: departure('LEAVING', false) }]);
    server?.close();
    const env = { CLUSTER_MANAGER_URL: url, CLUSTER_MANAGER_TOKEN: 'tok' };
    const started = Date.now();
    expect((await runScript({ ...env, DEPARTURE_TIMEOUT_SECONDS: '3' })).code).toBe(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);
    expect((await runCli(env, '3')).code).toBe(3);
  });

  it('is what post-render.sh adds to Helm’s output (a Helm post-renderer)', async () => {
    const bin = mkdtempSync(join(tmpdir(), 'post-render-'));
    try {
      symlinkSync(kubectlPath(), join(bin, 'kubectl'));
      const dir = join(repoRoot, 'k8s/overlays/pocket-v1/validators');
      const rendered = await new Promise<string>((resolve, reject) => {
        const child = execFile(
          '/bin/sh',
          [join(dir, 'post-render.sh')],
          { env: { PATH: `${bin}:${process.env.PATH ?? ''}` }, timeout: 60_000 },
          (error, stdout, stderr) => (error === null ? resolve(stdout) : reject(new Error(stderr))),
        );
        child.stdin?.end(readFileSync(join(dir, 'v1-chart-validator.yaml')));
      });
      expect(rendered).toContain('terminationGracePeriodSeconds: 180');
      expect(rendered).toContain('/v1/departures/');
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

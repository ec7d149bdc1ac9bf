// The debug CLI as a user runs it: `cluster-manager <command>` child processes against a real
// manager's control RPC (token in the env), checked by their output, their exit code and what
// changed on the cluster and the chain. Also `localnet-cli Debug ScaleActor validators N`.
import { createServer } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusedPort } from '../support/owned-ports.ts';
import { startService, type RunningService } from '../../src/manager/run.ts';
import { pending, waitFor } from '../../src/harness/wait.ts';
import { VERSION } from '../../src/manager/version.ts';
import { BIN, lines, runCli, startCli } from './support/cli.ts';
import {
  SERVICE_URL_TEMPLATE,
  startControlFixture,
  TOKEN,
  type ControlFixture,
} from './support/control-fixture.ts';

let fixture: ControlFixture;
let service: RunningService;
let env: Record<string, string>;

const address = (id: string): string => fixture.keys.get(id)!.address;

beforeAll(async () => {
  fixture = await startControlFixture();
  service = await startService({
    env: {
      KUBECONFIG: join(fixture.dir, 'kubeconfig'),
      CM_NAMESPACE: fixture.namespace,
      CM_CHAIN_RPC_URL: fixture.chain.baseUrl,
      CM_SERVICE_URL_TEMPLATE: SERVICE_URL_TEMPLATE,
      CM_JOURNAL_PATH: join(fixture.dir, 'cli-journal.sqlite'),
      CM_READY_DEBOUNCE: '50ms',
      CM_CHAIN_POLL_INTERVAL: '100ms',
      CM_SYNC_CHECK: 'false',
      CM_PACING: 'off',
      CM_RPC_HOST: '127.0.0.1',
      CM_RPC_PORT: '0',
      CM_RPC_TOKEN: TOKEN,
      CM_LOG_LEVEL: 'silent',
      CM_SHUTDOWN_TIMEOUT: '2s',
    },
  });
  env = { CLUSTER_MANAGER_URL: service.rpcUrl ?? '', CLUSTER_MANAGER_TOKEN: TOKEN };
  await waitFor(() => (service.manager.isReady() ? true : pending('not ready')), {
    what: 'the manager to be ready',
  });
});

afterAll(async () => {
  await service.stop();
  await fixture.stop();
});

describe('reading', () => {
  it('`--version` prints the package version', async () => {
    const result = await runCli(['--version']);
    expect([result.code, result.stdout]).toEqual([0, `${VERSION}\n`]);
  });

  it('`status` prints the chain, the pause and a table of every validator, and `--json` the same as GET /v1/validators', async () => {
    const table = await runCli(['status'], { env });
    expect(table.code).toBe(0);
    const [chain, header, ...rows] = lines(table.stdout);
    expect(chain).toMatch(/^chain height \d+(, last block [\d.]+ (s|min) ago)? · manager acting$/);
    expect(chain).toContain(`chain height ${await fixture.chain.height()}`);
    expect(header).toMatch(/^ID\s+POD\s+READY\s+WANTED\s+CHAIN\s+PHASE\s+REASON$/);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(/^001\s+validator-0\s+yes\s+yes\s+staked\s+(staked|active)\s/);

    const json = await runCli(['status', '--json'], { env });
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as {
      validators: { id: string; address: string }[];
      paused: boolean;
      chain: { height: number };
    };
    expect([parsed.paused, parsed.chain.height]).toEqual([false, await fixture.chain.height()]);
    const fromApi = (await (
      await fetch(`${env.CLUSTER_MANAGER_URL}/v1/validators`, {
        headers: { authorization: `Bearer ${env.CLUSTER_MANAGER_TOKEN}` },
      })
    ).json()) as {
      validators: { id: string; address: string }[];
    };
    expect(parsed.validators.map((v) => [v.id, v.address])).toEqual(
      fromApi.validators.map((v) => [v.id, v.address]),
    );
  });

  it('`plan` says there is nothing to do when the cluster and the chain agree', async () => {
    const text = await runCli(['plan'], { env });
    expect(text.code).toBe(0);
    expect(lines(text.stdout)).toEqual([expect.stringMatching(/^height \d+$/), 'nothing to do']);
    const json = await runCli(['plan', '--json'], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ synced: true, paused: false, actions: [] });
  });
});

describe('acting', () => {
  it('`pause` and `resume` switch the manager, and `trigger-view` commits a block', async () => {
    const paused = await runCli(['pause'], { env });
    expect([paused.code, paused.stdout]).toEqual([0, 'paused\n']);
    expect(service.manager.paused).toBe(true);
    const resumed = await runCli(['resume'], { env });
    expect([resumed.code, resumed.stdout]).toEqual([0, 'resumed\n']);
    expect(service.manager.paused).toBe(false);

    const before = await fixture.chain.height();
    const view = await runCli(['trigger-view'], { env });
    expect(view.code).toBe(0);
    expect(view.stdout).toBe(`height ${before + 1}\n`);
    expect(await fixture.chain.height()).toBe(before + 1);
  });

  it('`scale 2 --wait active --drive` shows progress and returns 0 once 002 signs a block', async () => {
    const result = await runCli(['scale', '2', '--wait', 'active', '--drive', '--timeout', '60'], {
      env,
    });
    expect(result.code, result.stderr).toBe(0);
    const progress = lines(result.stderr);
    expect(progress[0]).toBe('scaling to 2 (wait: active)…');
    expect(progress.some((l) => /^002: .*active \(/.test(l))).toBe(true);
    expect(progress.at(-1)).toMatch(/^validator: 1 → 2; done in [\d.]+ s at height \d+$/);
    // On chain: the stake committed, and 002 signed a certificate after it.
    const latest = await fixture.chain.height();
    let stakedAt: number | undefined;
    let signedAfter = false;
    for (let h = 1; h <= latest; h++) {
      const block = await fixture.chain.block(h);
      if (block.transactions?.some((t) => t.signer_addr === address('002'))) stakedAt ??= h;
      if (
        stakedAt !== undefined &&
        h > stakedAt &&
        block.block_header.quorum_cert.threshold_sig.signatures?.some(
          (s) => s.address === address('002'),
        )
      )
        signedAfter = true;
    }
    expect(stakedAt).toBeDefined();
    expect(signedAfter).toBe(true);
  });

  it('`actions` lists the journal newest first, and pages with --limit and --before', async () => {
    const text = await runCli(['actions'], { env });
    expect(text.code).toBe(0);
    const [header, ...rows] = lines(text.stdout);
    expect(header).toMatch(/^SEQ\s+ID\s+KIND\s+STATE\s+HEIGHT\s+TX\s+ERROR$/);
    expect(rows.some((r) => /^\d+\s+002\s+stake\s+committed\s/.test(r))).toBe(true);
    // `2` names 002, as `logs 2` does (the chain's id format reads a person's text).
    const json = await runCli(['actions', '--json', '--limit', '1', '--validator', '2'], { env });
    const page = JSON.parse(json.stdout) as { actions: { validatorId: string }[] };
    expect(page.actions).toHaveLength(1);
    expect(page.actions[0]?.validatorId).toBe('002');
  });

  it('`scale 3 --wait staked` fails at once, not after its timeout, when 003 has no key (SCALE_BLOCKED)', async () => {
    // 003 has no key in the Secret, so it can never be staked. Asked plainly, the scale is
    // refused before anything changes; forced, no use waiting 120 s either.
    const before = await fixture.replicas();
    const refused = await runCli(['scale', '3', '--wait', 'staked'], { env });
    expect(refused.code).toBe(1);
    expect(lines(refused.stderr).filter((l) => l.startsWith('error:'))).toEqual([
      'error: KEY_MISSING: cannot scale to 3: no key in the keys Secret for 003; their pods would run nodes that can never be validators. Add the keys first, or pass --force to scale anyway',
    ]);
    expect(await fixture.replicas()).toBe(before);
    const started = performance.now();
    const result = await runCli(['scale', '3', '--wait', 'staked', '--timeout', '120', '--force'], {
      env,
    });
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(result.code).toBe(1);
    const errors = lines(result.stderr).filter((l) => l.startsWith('error:'));
    expect(errors).toEqual([
      'error: SCALE_BLOCKED: validator is set to 3 replicas, but the wait cannot end: 003 is failed: KEY_MISSING: no key "003" in the keys Secret',
    ]);
    // What goes on, and how to follow it.
    expect(result.stderr).toMatch(/stopped waiting; the manager goes on: .*003 /);
    expect(result.stderr).toMatch(
      /follow it: cluster-manager watch {3}\(or: cluster-manager status\)/,
    );
    expect(await fixture.replicas()).toBe(3);
  });

  it('`scale 1` is refused while a leaving validator has no key (it may be staked): exit 1, KEY_MISSING', async () => {
    const result = await runCli(['scale', '1'], { env });
    expect(result.code).toBe(1);
    expect(lines(result.stderr).at(-1)).toMatch(/^error: KEY_MISSING: cannot drain 003/);
    expect(await fixture.replicas()).toBe(3);
  });

  it('`scale 1 --force` (no wait) returns 0 at once while the drain goes on, then the replicas drop', async () => {
    const result = await runCli(['scale', '1', '--force'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(lines(result.stderr).at(-1)).toMatch(/^validator: draining 002, 003; the replicas drop/);
    expect(await fixture.replicas()).toBe(3);
    await fixture.commitUntil(
      async () =>
        (await fixture.replicas()) === 1 || pending(`replicas ${await fixture.replicas()}`),
      { what: 'the drain to lower the replicas' },
    );
    expect((await fixture.chain.validator(address('002')))?.unstaking_height).toBeGreaterThan(0);
  });

  it('`localnet-cli Debug ScaleActor validators N` scales through the same control RPC', async () => {
    const up = await runCli(['Debug', 'ScaleActor', 'validators', '2'], {
      env,
      bin: BIN.localnetCli,
    });
    expect(up.code, up.stderr).toBe(0);
    expect(JSON.parse(up.stdout)).toMatchObject({ previous: 1, replicas: 2, outcome: 'done' });
    expect(await fixture.replicas()).toBe(2);
    await fixture.commitUntil(
      async () =>
        ((await fixture.chain.validator(address('002')))?.unstaking_height ?? 0) < 0 ||
        pending('002 not staked again yet'),
      { what: 'the manager to stake 002 again' },
    );
    const down = await runCli(['Debug', 'ScaleActor', 'validators', '1'], {
      env,
      bin: BIN.localnetCli,
    });
    expect(down.code, down.stderr).toBe(0);
    expect(JSON.parse(down.stdout)).toMatchObject({ outcome: 'draining', drained: ['002'] });
  });
});

describe('failing', () => {
  it.each([
    [['scale', '-1']],
    [['scale', '2.5']],
    [['scale', 'two']],
    [['scale', '1000']],
    [['scale', '12345678901234567']], // too large (past 15 digits), not "not a whole number"
    [['scale', '1e3']],
    [['scale', '2', '--wait', 'forever']],
    [['scale', '2', '--timeout', '0']],
    [['actions', '--validator', 'a b']],
    [['scale']],
    [['stauts']],
    [['status', '--server', 'not a url']],
  ])('`%j` is a usage error: exit 2, one line, nothing sent', async (args) => {
    const replicas = await fixture.replicas();
    const result = await runCli(args, { env });
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([expect.stringMatching(/^error: /)]);
    expect(result.stdout).toBe('');
    expect(await fixture.replicas()).toBe(replicas);
  });

  it('a mutation without the token exits 1 with the catalogue code in one line', async () => {
    const result = await runCli(['pause'], {
      env: { CLUSTER_MANAGER_URL: env.CLUSTER_MANAGER_URL! },
    });
    expect(result.code).toBe(1);
    // The code, then what to do: where the URL came from and how to get the token.
    expect(lines(result.stderr)).toEqual([
      `error: UNAUTHORIZED: a valid "Authorization: Bearer <token>" header is required; no token was sent to ${env.CLUSTER_MANAGER_URL!} (CLUSTER_MANAGER_URL): set CLUSTER_MANAGER_TOKEN or pass --token; for a devnet, run the command inside the project of a running devnet (its .devnet is found from there up), pass --devnet DIR, or eval "$(npx cluster-manager devnet env)" there; on a cluster, the token is in the manager's Secret (docs/tilt.md)`,
    ]);
    const wrong = await runCli(['pause'], { env: { ...env, CLUSTER_MANAGER_TOKEN: 'not-it' } });
    expect(lines(wrong.stderr)).toEqual([
      expect.stringMatching(
        /^error: UNAUTHORIZED: .*; the token given \(--token or CLUSTER_MANAGER_TOKEN\) is not the one of the manager at .* \(CLUSTER_MANAGER_URL\): a devnet makes a new token at every start/,
      ),
    ]);
    // A URL that is not one says which setting and what it should look like.
    const url = await runCli(['status'], { env: { CLUSTER_MANAGER_URL: 'localhost:8080' } });
    expect([url.code, lines(url.stderr)]).toEqual([
      2,
      [
        'error: CLUSTER_MANAGER_URL is not an http(s) URL: "localhost:8080"; give the manager\'s control RPC as http://host:port (e.g. http://127.0.0.1:8080)',
      ],
    ]);
    expect(service.manager.paused).toBe(false);
  });

  it('a scale the manager refuses (paused) exits 1 with the code in one line', async () => {
    const replicas = await fixture.replicas();
    await runCli(['pause'], { env });
    try {
      const result = await runCli(['scale', '5'], { env });
      expect(result.code).toBe(1);
      expect(lines(result.stderr)).toEqual([
        'error: PAUSED: the manager is paused; resume it before scaling',
      ]);
    } finally {
      await runCli(['resume'], { env });
    }
    expect(await fixture.replicas()).toBe(replicas);
  });

  it('a server that is not the manager exits 1 with its HTTP status in one line', async () => {
    // The chain node's RPC answers, but with its own errors.
    const result = await runCli(['status', '--server', fixture.chain.baseUrl]);
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([
      expect.stringMatching(/^error: status failed with HTTP \d{3}$/),
    ]);
  });

  it("a manager that is shutting down (fastify's own 503 body) exits 1 with one line", async () => {
    // What fastify answers by itself while it closes (return503OnClosing).
    const closing = createServer((_request, response) => {
      response.writeHead(503, { 'content-type': 'application/json' });
      response.end(
        '{"error":"Service Unavailable","message":"Service Unavailable","statusCode":503}',
      );
    });
    await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
    try {
      const port = (closing.address() as { port: number }).port;
      const result = await runCli(['pause', '--server', `http://127.0.0.1:${port}`], {
        env: { CLUSTER_MANAGER_TOKEN: TOKEN },
      });
      expect(result.code).toBe(1);
      expect(lines(result.stderr)).toEqual(['error: pause failed with HTTP 503']);
    } finally {
      await new Promise((resolve) => closing.close(resolve));
    }
  });

  it('an unreachable manager exits 1 with one line', async () => {
    const dead = await refusedPort();
    const result = await runCli(['status', '--server', `http://127.0.0.1:${dead.port}`]);
    await dead.release();
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([
      expect.stringMatching(
        /^error: cannot reach the manager at http:\/\/127\.0\.0\.1:\d+ \(connect ECONNREFUSED/,
      ),
    ]);
  });
});

describe('watch', () => {
  it('follows the event stream until it is stopped', async () => {
    const watch = startCli(['watch'], { env });
    try {
      await waitFor(() => (watch.stdout.includes('following') ? true : pending(watch.stdout)), {
        what: 'watch to connect',
      });
      await runCli(['pause'], { env });
      await runCli(['resume'], { env });
      const height = await fixture.commitBlock();
      await waitFor(
        () =>
          /\d\d:\d\d:\d\d h\d+ paused\n[\s\S]*resumed\n/.test(watch.stdout)
            ? true
            : pending(watch.stdout),
        { what: 'pause and resume in the output' },
      );
      // A new block is not a change worth a line (only with --heights).
      await waitFor(
        async () =>
          (await fixture.chain.height()) >= height ? true : pending('the block is not in yet'),
        { what: `height ${height}` },
      );
      expect(watch.stdout).not.toMatch(/new block|height \d/);
    } finally {
      watch.child.kill('SIGTERM');
    }
    const result = await watch.exited;
    expect(result.code).toBe(0);
  });

  it('ends quietly with 0 when its reader goes away (`watch | head`)', async () => {
    const watch = startCli(['watch'], { env });
    try {
      await waitFor(() => (watch.stdout.includes('following') ? true : pending(watch.stdout)), {
        what: 'watch to connect',
      });
      watch.child.stdout?.destroy();
      // Changes it prints: the first write after the reader left ends it.
      await runCli(['pause'], { env });
      await runCli(['resume'], { env });
      const result = await Promise.race([
        watch.exited,
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 10_000)),
      ]);
      expect(result?.code).toBe(0);
      expect(result?.stderr).toBe('');
    } finally {
      watch.child.kill('SIGKILL');
      await watch.exited;
    }
  });
});

describe('await-departure (the preStop hook)', () => {
  it('exits 0 at once for a pod whose validator stays (STILL_WANTED), taking the pod from POD_NAME', async () => {
    const result = await runCli(['await-departure'], {
      env: { ...env, POD_NAME: 'validator-0', HOSTNAME: 'something-else' },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(lines(result.stdout).at(-1)).toMatch(/^validator-0 \(001\): STILL_WANTED: /);
  });

  it('holds a leaving pod until its validator has left the set, then exits 0', async () => {
    // An earlier test's background drain must be over before a new scale is taken.
    await fixture.commitUntil(
      async () =>
        (await fixture.replicas()) === 1 || pending(`replicas ${await fixture.replicas()}`),
      { what: 'the earlier drain to finish' },
    );
    expect((await runCli(['scale', '2', '--wait', 'active', '--drive'], { env })).code).toBe(0);
    expect((await runCli(['scale', '1'], { env })).code).toBe(0);
    const hook = startCli(['await-departure', '--pod', 'validator-1', '--timeout', '60'], { env });
    // Nothing commits without a block here: the hook says where things stand and keeps waiting.
    await waitFor(
      () => (/validator-1 \(002\): LEAVING/.test(hook.stdout) ? true : pending(hook.stdout)),
      { what: 'await-departure to report 002 leaving' },
    );
    expect(hook.child.exitCode).toBeNull();
    let exited: Awaited<typeof hook.exited> | undefined;
    void hook.exited.then((result) => (exited = result));
    await fixture.commitUntil(() => exited ?? pending(hook.stdout), {
      what: 'await-departure to exit',
    });
    expect(exited?.code, exited?.stderr).toBe(0);
    expect(lines(exited?.stdout ?? '').at(-1)).toMatch(/^validator-1 \(002\): LEFT_SET: /);
    // It let go only once 002 was out of the set.
    expect((await fixture.chain.validator(address('002')))?.unstaking_height).toBeGreaterThan(0);
  });

  it('retries while the manager is unreachable, and exits 3 when its timeout runs out', async () => {
    const dead = await refusedPort();
    const started = Date.now();
    const result = await runCli(['await-departure', '--pod', 'validator-0', '--timeout', '2'], {
      env: { CLUSTER_MANAGER_URL: `http://127.0.0.1:${dead.port}`, CLUSTER_MANAGER_TOKEN: TOKEN },
    });
    await dead.release();
    expect(result.code).toBe(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
    expect(result.stdout).toMatch(/the manager does not answer/);
    expect(lines(result.stderr).at(-1)).toMatch(/^error: timed out: validator-0 may not go yet/);
  });

  it('exits 1 on a wrong token and 2 without a pod, at once', async () => {
    const wrong = await runCli(['await-departure', '--pod', 'validator-0'], {
      env: { ...env, CLUSTER_MANAGER_TOKEN: 'not-the-token-0123456789' },
    });
    expect(wrong.code).toBe(1);
    expect(lines(wrong.stderr).at(-1)).toMatch(/^error: UNAUTHORIZED: /);
    const noPod = await runCli(['await-departure'], { env: { ...env, HOSTNAME: '' } });
    expect(noPod.code).toBe(2);
    expect(lines(noPod.stderr).at(-1)).toMatch(/no pod: pass --pod, or set POD_NAME/);
  });
});

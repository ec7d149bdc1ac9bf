// Lifecycle hooks: the hooks file's named errors, the runner's environment and outcomes, and the
// gate's order, policies, retries and exactly-once runs across a restart — with fakes of the
// command and HTTP ports and a journal file reopened as a restarted manager would.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { HookGate } from '../../src/manager/hooks/hook-gate.ts';
import type {
  CommandOutcome,
  CommandPort,
  CommandRequest,
  HttpOutcome,
  HttpPort,
  HttpRequest,
} from '../../src/manager/hooks/hook-ports.ts';
import { runHook, type HookContext } from '../../src/manager/hooks/hook-runner.ts';
import {
  HooksFileError,
  loadHooksFile,
  parseHooks,
  type FileFacts,
  type HookDefinition,
} from '../../src/manager/hooks/hooks-file.ts';
import { Journal } from '../../src/manager/journal/journal.ts';
import { Metrics } from '../../src/manager/metrics.ts';
import { ChainStatus, type ActionRecord } from '../../src/manager/model.ts';
import { Phase, Wait, type Decision } from '../../src/manager/planner/plan.ts';
import { ManualClock } from '../support/manual-clock.ts';

const HOOK_BIN = '/opt/hooks/run';
/** A disk where HOOK_BIN is an executable only its owner may write. */
const disk = (files: Record<string, { mode: number; text?: string }> = {}): FileFacts => ({
  read: (path) => {
    const text = files[path]?.text;
    if (text === undefined) throw new Error(`ENOENT: ${path}`);
    return text;
  },
  mode: (path) => {
    if (path === HOOK_BIN) return 0o100755;
    const file = files[path];
    if (file === undefined) throw new Error(`ENOENT: ${path}`);
    return file.mode;
  },
  isExecutable: (path) => path === HOOK_BIN || path === '/opt/hooks/open',
});

describe('the hooks file', () => {
  it('reads YAML with defaults: block policy, 30 s, names by phase and position', () => {
    const text = `hooks:
  - {on: pre-stake, command: ["${HOOK_BIN}", "fund"], env: {AMOUNT: 5}}
  - {on: pre-stake, name: register, http: "http://127.0.0.1:9/x", timeoutSeconds: 0.5, failurePolicy: continue}
`;
    const hooks = loadHooksFile(
      '/etc/hooks.yaml',
      disk({ '/etc/hooks.yaml': { mode: 0o100600, text } }),
    );
    expect(hooks).toEqual([
      {
        name: 'pre-stake-1',
        on: 'pre-stake',
        target: { kind: 'command', command: [HOOK_BIN, 'fund'] },
        env: { AMOUNT: '5' },
        timeoutMs: 30_000,
        failurePolicy: 'block',
      },
      {
        name: 'register',
        on: 'pre-stake',
        target: { kind: 'http', url: 'http://127.0.0.1:9/x' },
        env: {},
        timeoutMs: 500,
        failurePolicy: 'continue',
      },
    ]);
  });

  it('reports every problem at once, each naming the hook and what is wrong', () => {
    const { hooks, problems } = parseHooks(
      {
        hooks: [
          { on: 'pre-stak', command: [HOOK_BIN] },
          { on: 'post-stake', command: ['bin/run'] },
          { on: 'post-stake', command: [HOOK_BIN], timeoutSeconds: 0 },
          { on: 'post-stake', command: [HOOK_BIN], timeoutSeconds: '10' },
          { on: 'readiness', http: 'ftp://x', failurePolicy: 'ignore' },
          { on: 'pre-unstake', command: [HOOK_BIN], http: 'http://x' },
          { on: 'pre-unstake', name: 'a', command: [HOOK_BIN], shell: true },
          { on: 'pre-unstake', name: 'a', command: [HOOK_BIN] },
          { on: 'pre-unstake', command: ['/opt/hooks/missing'] },
          { on: 'pre-unstake', command: ['/opt/hooks/open'] },
          { on: 'post-unstake', http: 'http://user:pw@host/' },
        ],
      },
      {
        isExecutable: (p) => p === HOOK_BIN || p === '/opt/hooks/open',
        mode: (p) => (p === '/opt/hooks/open' ? 0o100777 : 0o100755),
      },
    );
    expect(hooks).toEqual([]);
    expect(problems).toEqual([
      'hooks[0]: unknown hook "pre-stak"; expected one of pre-stake, post-stake, pre-unstake, post-unstake, readiness',
      'hooks[1] (post-stake-1): relative path "bin/run"; use an absolute path',
      'hooks[2] (post-stake-2): bad timeoutSeconds 0; expected a number above 0 and at most 3600',
      'hooks[3] (post-stake-3): bad timeoutSeconds "10"; expected a number above 0 and at most 3600',
      'hooks[4] (readiness-1): bad http URL "ftp://x"; expected http(s)://…',
      'hooks[4] (readiness-1): bad failurePolicy "ignore"; expected block or continue',
      'hooks[5] (pre-unstake-1): needs exactly one of "command" or "http"',
      'hooks[6]: unknown field "shell"',
      'hooks[7] (a): duplicate name "a"',
      'hooks[8] (pre-unstake-4): /opt/hooks/missing is not an executable file',
      'hooks[9] (pre-unstake-5): /opt/hooks/open is writable by users other than its owner',
      'hooks[10] (post-unstake-1): http URL must not carry credentials',
    ]);
  });

  it('refuses a file others may write, and one that is not YAML', () => {
    const facts = disk({
      '/w.yaml': { mode: 0o100666, text: 'hooks: []' },
      '/g.yaml': { mode: 0o100620, text: 'hooks: []' },
      '/bad.yaml': { mode: 0o100600, text: 'hooks: [' },
      '/ok.json': { mode: 0o100644, text: '{"hooks": []}' },
    });
    for (const path of ['/w.yaml', '/g.yaml'])
      expect(() => loadHooksFile(path, facts)).toThrow(/writable by users other than its owner/);
    expect(() => loadHooksFile('/bad.yaml', facts)).toThrow(HooksFileError);
    expect(() => loadHooksFile('/missing.yaml', facts)).toThrow(/cannot read the file/);
    expect(loadHooksFile('/ok.json', facts)).toEqual([]);
  });
});

/** A command port that answers from a script of outcomes and records every request. */
class FakeCommand implements CommandPort {
  readonly requests: CommandRequest[] = [];
  readonly answer: (request: CommandRequest) => CommandOutcome | Promise<CommandOutcome>;
  constructor(answer: (request: CommandRequest) => CommandOutcome | Promise<CommandOutcome>) {
    this.answer = answer;
  }
  async run(request: CommandRequest): Promise<CommandOutcome> {
    this.requests.push(request);
    return this.answer(request);
  }
  /** The hooks run, in order, as `name@actionKey`. */
  get runs(): string[] {
    return this.requests.map((r) => `${r.env.CM_HOOK_NAME ?? '?'}@${r.env.CM_ACTION_KEY ?? '?'}`);
  }
}

class FakeHttp implements HttpPort {
  readonly requests: HttpRequest[] = [];
  readonly answer: HttpOutcome;
  constructor(answer: HttpOutcome) {
    this.answer = answer;
  }
  post(request: HttpRequest): Promise<HttpOutcome> {
    this.requests.push(request);
    return Promise.resolve(this.answer);
  }
}

const ok: CommandOutcome = { kind: 'exited', exitCode: 0, output: '' };
const ADDRESS = 'ab'.repeat(20);
const KEY_HEX = 'cd'.repeat(64);

function hook(
  fields: Partial<HookDefinition> & Pick<HookDefinition, 'name' | 'on'>,
): HookDefinition {
  return {
    target: { kind: 'command', command: [HOOK_BIN, fields.name] },
    env: {},
    timeoutMs: 1_000,
    failurePolicy: 'block',
    ...fields,
  };
}

const context: HookContext = {
  point: 'pre-stake',
  validatorId: '005',
  address: ADDRESS,
  chainUrl: 'http://127.0.0.1:1/',
  actionKey: '005/stake/after-0',
  serviceUrl: 'validator-4:42069',
};

describe('runHook', () => {
  const ports = (command: CommandPort, http: HttpPort = new FakeHttp({ kind: 'timeout' })) => ({
    command,
    http,
    path: '/usr/bin:/bin',
    now: () => 0,
  });

  it('runs a command by absolute path with only its env and the validator facts, never a key', async () => {
    const command = new FakeCommand(() => ok);
    const def = hook({
      name: 'fund',
      on: 'pre-stake',
      env: { CM_VALIDATOR_ID: 'spoof', AMOUNT: '5' },
    });
    const result = await runHook(def, context, ports(command), new AbortController().signal);
    expect(result.ok).toBe(true);
    const request = command.requests[0];
    expect(request?.file).toBe(HOOK_BIN);
    expect(request?.args).toEqual(['fund']);
    expect(request?.timeoutMs).toBe(1_000);
    expect(request?.env).toEqual({
      PATH: '/usr/bin:/bin',
      AMOUNT: '5',
      CM_HOOK_NAME: 'fund',
      CM_HOOK_PHASE: 'pre-stake',
      CM_VALIDATOR_ID: '005',
      CM_VALIDATOR_ADDRESS: ADDRESS,
      CM_CHAIN_RPC_URL: 'http://127.0.0.1:1/',
      CM_ACTION_KEY: '005/stake/after-0',
      CM_SERVICE_URL: 'validator-4:42069',
    });
    expect(JSON.stringify(request)).not.toContain(KEY_HEX);
  });

  it('says how a command failed: exit code with its output, timeout, output too large, not run, what happened to its process group', async () => {
    const group = { pgid: 4242, processes: 3, survivors: 0, sigkill: false };
    const stuck = { pgid: 4242, processes: 2, survivors: 1, sigkill: true };
    const cases: [CommandOutcome, string][] = [
      [{ kind: 'exited', exitCode: 3, output: 'no\n funds ' }, 'exited with 3: no funds'],
      [{ kind: 'timeout' }, 'did not finish within 1 s (killed)'],
      [
        { kind: 'timeout', group },
        'did not finish within 1 s; killed its process group (3 processes, SIGTERM)',
      ],
      [
        { kind: 'timeout', group: stuck },
        'did not finish within 1 s; killed its process group (2 processes, SIGTERM, then SIGKILL); 1 process still alive: not run again until they are gone',
      ],
      [
        { kind: 'exited', exitCode: 1, output: 'x', group: { ...group, processes: 1 } },
        'exited with 1; left 1 process behind; stopped (SIGTERM): x',
      ],
      [
        { kind: 'still-running', pgid: 4242, processes: 1 },
        'not started again: 1 process(es) of its last run (process group 4242) are still alive after SIGKILL',
      ],
      [{ kind: 'output-too-large' }, 'wrote more output than allowed (killed)'],
      [{ kind: 'not-run', reason: 'EACCES' }, 'could not run (EACCES)'],
    ];
    for (const [outcome, error] of cases) {
      const result = await runHook(
        hook({ name: 'x', on: 'pre-stake' }),
        context,
        ports(new FakeCommand(() => outcome)),
        new AbortController().signal,
      );
      expect(result).toMatchObject({ ok: false, cancelled: false, error });
    }
  });

  it('a command that exits 0 but leaves processes behind passes, with a note of what was stopped', async () => {
    const result = await runHook(
      hook({ name: 'x', on: 'pre-stake' }),
      context,
      ports(
        new FakeCommand(() => ({
          kind: 'exited',
          exitCode: 0,
          output: '',
          group: { pgid: 7, processes: 2, survivors: 0, sigkill: false },
        })),
      ),
      new AbortController().signal,
    );
    expect(result).toMatchObject({ ok: true, note: 'left 2 processes behind; stopped (SIGTERM)' });
  });

  it('tells the command port which hook of which validator it runs (its last run is kept by that)', async () => {
    const command = new FakeCommand(() => ok);
    await runHook(
      hook({ name: 'fund', on: 'pre-stake' }),
      context,
      ports(command),
      new AbortController().signal,
    );
    expect(command.requests.map((r) => r.key)).toEqual(['005|fund']);
  });

  it('POSTs a JSON body to an HTTP hook; 2xx passes, anything else fails with the status', async () => {
    const def = hook({
      name: 'svc',
      on: 'post-stake',
      target: { kind: 'http', url: 'http://h/x' },
    });
    const passing = new FakeHttp({ kind: 'answered', status: 204, body: '' });
    expect(
      (
        await runHook(
          def,
          context,
          ports(new FakeCommand(() => ok), passing),
          new AbortController().signal,
        )
      ).ok,
    ).toBe(true);
    expect(passing.requests[0]?.body).toEqual({
      hook: 'svc',
      phase: 'pre-stake',
      validator: { id: '005', address: ADDRESS, serviceUrl: 'validator-4:42069' },
      chainUrl: 'http://127.0.0.1:1/',
      actionKey: '005/stake/after-0',
    });
    for (const [answer, error] of [
      [{ kind: 'answered', status: 503, body: 'busy' }, 'answered HTTP 503: busy'],
      [{ kind: 'unreachable', reason: 'ECONNREFUSED' }, 'unreachable (ECONNREFUSED)'],
      [{ kind: 'timeout' }, 'did not answer within 1 s'],
    ] as [HttpOutcome, string][]) {
      const result = await runHook(
        def,
        context,
        ports(new FakeCommand(() => ok), new FakeHttp(answer)),
        new AbortController().signal,
      );
      expect(result).toMatchObject({ ok: false, error });
    }
  });
});

describe('HookGate', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function journalPath(): string {
    const dir = mkdtempSync(join(tmpdir(), 'cm-hooks-'));
    dirs.push(dir);
    return join(dir, 'journal.sqlite');
  }

  function gate(options: {
    hooks: HookDefinition[];
    command: CommandPort;
    journal: Journal;
    clock?: ManualClock;
  }): { gate: HookGate; events: string[]; metrics: Metrics; retries: { n: number } } {
    const clock = options.clock ?? new ManualClock();
    const events: string[] = [];
    const metrics = new Metrics();
    const retries = { n: 0 };
    const g = new HookGate({
      hooks: options.hooks,
      journal: options.journal,
      ports: {
        command: options.command,
        http: new FakeHttp({ kind: 'timeout' }),
        path: '/bin',
        now: () => clock.now(),
      },
      chainUrl: 'http://chain/',
      clock,
      logger: pino({ level: 'silent' }),
      metrics,
      event: (id, type, reason, message) => events.push(`${type} ${reason} ${id}: ${message}`),
      onRetryDue: () => retries.n++,
    });
    return { gate: g, events, metrics, retries };
  }

  const stake = { id: '005', address: ADDRESS, kind: 'stake' as const, serviceUrl: 'v:1' };
  const signal = new AbortController().signal;

  function decision(fields: Partial<Decision> = {}): Decision {
    return {
      key: '005',
      id: '005',
      address: ADDRESS,
      action: 'stake',
      waitingFor: undefined,
      phase: Phase.pending,
      code: undefined,
      reason: 'wanted; pod Ready',
      requeueAfterMs: undefined,
      fingerprint: 'f',
      serviceUrl: 'v:1',
      wanted: true,
      chainStatus: ChainStatus.absent,
      signing: false,
      ...fields,
    };
  }

  it('runs readiness then pre-stake hooks in file order; a failing block hook holds the action, names itself, and stops the rest', async () => {
    let gateOpen = false;
    const command = new FakeCommand((r) =>
      r.env.CM_HOOK_NAME === 'gate' && !gateOpen
        ? { kind: 'exited', exitCode: 1, output: 'not yet' }
        : ok,
    );
    const clock = new ManualClock();
    const journal = Journal.open(journalPath(), clock);
    const {
      gate: g,
      events,
      metrics,
    } = gate({
      hooks: [
        hook({ name: 'record', on: 'pre-stake' }),
        hook({ name: 'gate', on: 'pre-stake' }),
        hook({ name: 'after', on: 'pre-stake' }),
        hook({ name: 'ready', on: 'readiness' }),
        hook({ name: 'leaving', on: 'pre-unstake' }),
      ],
      command,
      journal,
      clock,
    });
    const hold = await g.before(stake, signal);
    expect(command.runs).toEqual([
      'ready@005/stake/after-0/readiness',
      'record@005/stake/after-0',
      'gate@005/stake/after-0',
    ]);
    expect(hold?.reason).toBe(
      'HOOK_FAILED: stake held by pre-stake hook "gate": exited with 1: not yet; trying again in 1 s',
    );
    expect(g.overlay(decision())).toMatchObject({ waitingFor: Wait.hook, reason: hold?.reason });
    // A node height gone stale between tries is asked again before the next one: still the hook.
    expect(g.overlay(decision({ waitingFor: Wait.nodeSync })).waitingFor).toBe(Wait.hook);
    expect(g.overlay(decision({ waitingFor: Wait.pacing })).waitingFor).toBe(Wait.pacing);
    // Another action than the one held is shown as the planner decided it.
    expect(g.overlay(decision({ action: 'unstake' })).waitingFor).toBeUndefined();
    expect(events).toContain(
      'Warning HookFailed 005: pre-stake hook "gate" failed (blocking; will try again): exited with 1: not yet',
    );

    // Before the backoff is over, nothing runs again.
    expect((await g.before(stake, signal))?.retryInMs).toBe(1_000);
    expect(command.requests).toHaveLength(4); // the readiness check ran again, nothing else
    await clock.advance(1_000);
    expect((await g.before(stake, signal))?.retryInMs).toBe(2_000); // failed again: 2 s
    await clock.advance(2_000);
    gateOpen = true;
    expect(await g.before(stake, signal)).toBeUndefined();
    expect(command.runs.filter((r) => !r.includes('readiness'))).toEqual([
      'record@005/stake/after-0',
      'gate@005/stake/after-0',
      'gate@005/stake/after-0',
      'gate@005/stake/after-0',
      'after@005/stake/after-0',
    ]);
    expect(g.overlay(decision()).waitingFor).toBeUndefined();
    expect(journal.hookRun('005/stake/after-0', 'gate')).toMatchObject({
      state: 'succeeded',
      attempts: 3,
    });
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'cluster_manager_hook_runs_total{phase="pre-stake",hook="gate",result="failed"} 2',
    );
    expect(text).toContain(
      'cluster_manager_hook_runs_total{phase="pre-stake",hook="gate",result="succeeded"} 1',
    );
  });

  it('a continue hook that fails lets the action go, and is not run again for it', async () => {
    const command = new FakeCommand(() => ({ kind: 'timeout' }));
    const { gate: g, events } = gate({
      hooks: [hook({ name: 'notify', on: 'pre-unstake', failurePolicy: 'continue' })],
      command,
      journal: Journal.open(':memory:', new ManualClock()),
    });
    const unstake = { ...stake, kind: 'unstake' as const };
    expect(await g.before(unstake, signal)).toBeUndefined();
    expect(await g.before(unstake, signal)).toBeUndefined();
    expect(command.runs).toEqual(['notify@005/unstake/after-0']);
    expect(events).toEqual([
      'Warning HookFailed 005: pre-unstake hook "notify" failed (continuing): did not finish within 1 s (killed)',
    ]);
  });

  it('runs nothing twice across a restart; a new action (after an applied one) runs its hooks again', async () => {
    const path = journalPath();
    const hooks = [hook({ name: 'record', on: 'pre-stake' })];
    const first = new FakeCommand(() => ok);
    let journal = Journal.open(path, new ManualClock());
    expect(
      await gate({ hooks, command: first, journal }).gate.before(stake, signal),
    ).toBeUndefined();
    journal.close();

    journal = Journal.open(path, new ManualClock());
    const second = new FakeCommand(() => ok);
    const restarted = gate({ hooks, command: second, journal }).gate;
    expect(await restarted.before(stake, signal)).toBeUndefined();
    expect(second.requests).toEqual([]);

    // The stake is applied, then an unstake: the next stake is a new action.
    const s = journal.prepare({
      validatorId: '005',
      address: ADDRESS,
      kind: 'stake',
      mode: 'rpc',
      fingerprint: 'f',
      reason: 'r',
      preparedHeight: 1,
    });
    journal.markCommitted(s.seq, { height: 2, resultCode: 0 });
    const u = journal.prepare({
      validatorId: '005',
      address: ADDRESS,
      kind: 'unstake',
      mode: 'rpc',
      fingerprint: 'u',
      reason: 'r',
      preparedHeight: 3,
    });
    journal.markCommitted(u.seq, { height: 4, resultCode: 0 });
    expect(await restarted.before(stake, signal)).toBeUndefined();
    expect(second.runs).toEqual([`record@005/stake/after-${u.seq}`]);
  });

  it('a run left "running" by a killed manager: a block hook runs again, a continue hook does not', async () => {
    const journal = Journal.open(':memory:', new ManualClock());
    for (const name of ['must', 'maybe'])
      journal.startHookRun({
        actionKey: '005/stake/after-0',
        hook: name,
        point: 'pre-stake',
        validatorId: '005',
      });
    const command = new FakeCommand(() => ok);
    const { gate: g } = gate({
      hooks: [
        hook({ name: 'maybe', on: 'pre-stake', failurePolicy: 'continue' }),
        hook({ name: 'must', on: 'pre-stake' }),
      ],
      command,
      journal,
    });
    expect(await g.before(stake, signal)).toBeUndefined();
    expect(command.runs).toEqual(['must@005/stake/after-0']);
    expect(journal.hookRun('005/stake/after-0', 'maybe')).toMatchObject({
      state: 'failed',
      error: 'the manager stopped while it ran; not run again (failurePolicy continue)',
    });
  });

  it('runs post-stake once the validator it staked signs, and post-unstake once it has left; once each', async () => {
    const journal = Journal.open(':memory:', new ManualClock());
    const command = new FakeCommand(() => ok);
    const { gate: g } = gate({
      hooks: [
        hook({ name: 'signed', on: 'post-stake' }),
        hook({ name: 'left', on: 'post-unstake' }),
      ],
      command,
      journal,
    });
    const s = journal.prepare({
      validatorId: '005',
      address: ADDRESS,
      kind: 'stake',
      mode: 'rpc',
      fingerprint: 'f',
      reason: 'r',
      preparedHeight: 1,
    });
    const committed = journal.markCommitted(s.seq, { height: 2, resultCode: 0 });
    const latest = new Map<string, ActionRecord>([['005', committed]]);
    const staked = decision({
      action: 'none',
      chainStatus: ChainStatus.staked,
      phase: Phase.staked,
    });
    g.observe([staked], latest, true);
    g.observe([{ ...staked, phase: Phase.active }], latest, false); // not leading / paused: nothing
    await g.stop().catch(() => undefined);
    expect(command.requests).toEqual([]);

    const live = gate({
      hooks: [
        hook({ name: 'signed', on: 'post-stake' }),
        hook({ name: 'left', on: 'post-unstake' }),
      ],
      command,
      journal,
    }).gate;
    live.observe([{ ...staked, phase: Phase.active }], latest, true);
    live.observe([{ ...staked, phase: Phase.active }], latest, true); // already running: not twice
    await settle();
    live.observe([{ ...staked, phase: Phase.active }], latest, true); // recorded: not again
    await settle();
    expect(command.runs).toEqual([`signed@005/stake/${s.seq}`]);
    expect(command.requests[0]?.env.CM_HOOK_PHASE).toBe('post-stake');

    const u = journal.prepare({
      validatorId: '005',
      address: ADDRESS,
      kind: 'unstake',
      mode: 'rpc',
      fingerprint: 'u',
      reason: 'r',
      preparedHeight: 3,
    });
    const gone = journal.markCommitted(u.seq, { height: 4, resultCode: 0 });
    const after = new Map<string, ActionRecord>([['005', gone]]);
    live.observe([decision({ action: 'none', chainStatus: ChainStatus.staked })], after, true); // still in the set
    await settle();
    live.observe(
      [decision({ action: 'none', chainStatus: ChainStatus.unstaking, phase: Phase.unstaked })],
      after,
      true,
    );
    await settle();
    expect(command.runs).toEqual([`signed@005/stake/${s.seq}`, `left@005/unstake/${u.seq}`]);
  });

  it('a failing block post hook is named in the reason and tried again when its backoff is over', async () => {
    const journal = Journal.open(':memory:', new ManualClock());
    const clock = new ManualClock();
    let fail = true;
    const command = new FakeCommand(() =>
      fail ? { kind: 'exited', exitCode: 2, output: '' } : ok,
    );
    const { gate: g, retries } = gate({
      hooks: [hook({ name: 'signed', on: 'post-stake' })],
      command,
      journal,
      clock,
    });
    const s = journal.prepare({
      validatorId: '005',
      address: ADDRESS,
      kind: 'stake',
      mode: 'rpc',
      fingerprint: 'f',
      reason: 'r',
      preparedHeight: 1,
    });
    const latest = new Map([['005', journal.markCommitted(s.seq, { height: 2, resultCode: 0 })]]);
    const active = decision({
      action: 'none',
      chainStatus: ChainStatus.staked,
      phase: Phase.active,
      reason: 'signing',
    });
    g.observe([active], latest, true);
    await settle();
    expect(g.overlay(active).reason).toBe(
      'signing; post-stake hook "signed" failed (exited with 2); trying again',
    );
    g.observe([active], latest, true); // within the backoff: nothing runs
    await settle();
    expect(command.requests).toHaveLength(1);
    await clock.advance(1_000);
    expect(retries.n).toBeGreaterThan(0);
    fail = false;
    g.observe([active], latest, true);
    await settle();
    expect(command.requests).toHaveLength(2);
    g.observe([active], latest, true);
    expect(g.overlay(active).reason).toBe('signing');
  });
});

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
}

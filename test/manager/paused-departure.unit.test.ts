// A scale-down the cluster makes while the managers are paused (issue 30, item 6): the pods being
// removed are held — the pause holds their validators' unstakes — until the margin before the
// kubelet kills them; from then their validators are unstaked as if not paused (the minimum set
// still applies; stakes and other unstakes stay paused), and the plan, the departure answer and
// the Events say when and why. plan() and planOne() agree.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ActionKind } from '../../src/manager/model.ts';
import { plan, planOne, Wait, type Decision } from '../../src/manager/planner/plan.ts';
import { PausedDepartures } from '../../src/manager/pause/paused-departures.ts';
import { ManualClock } from '../support/manual-clock.ts';
import {
  action,
  GENESIS,
  input,
  NOW,
  row,
  unwanted,
  wanted,
  type Scenario,
} from '../support/plan-fixture.ts';

const MARGIN = 60_000;
const KILL_AT = NOW + 90_000; // deleted 0 s ago with a 90 s grace period: held until NOW + 30 s
const SEVEN = ['001', '002', '003', '004', '005', '006', '007'];

/** 7 staked and signing; kubectl scaled to 4 (pods 4–6 terminating); paused. */
function scaledDownWhilePaused(now: number, extra: Partial<Scenario> = {}) {
  const s: Scenario = {
    chain: SEVEN.map((id) => row(id)),
    signers: SEVEN,
    desired: [
      ...GENESIS.map((id) => wanted(id)),
      ...['005', '006', '007'].map((id) =>
        unwanted(id, { terminating: true, deletingAt: KILL_AT, ready: false }),
      ),
    ],
    paused: true,
    settings: { pauseDepartureMarginMs: MARGIN },
    ...extra,
  };
  return { ...input(s), now };
}

function byId(decisions: readonly Decision[]): Record<string, Decision> {
  return Object.fromEntries(decisions.map((d) => [d.key, d]));
}

describe('a scale-down while paused', () => {
  it('holds the leaving validators staked until the margin before their pods are killed, and says so', () => {
    const held = scaledDownWhilePaused(NOW + 29_999);
    const d = byId(plan(held));
    for (const id of ['005', '006', '007']) {
      expect(d[id]).toMatchObject({ action: ActionKind.unstake, waitingFor: Wait.paused });
      expect(d[id]?.reason).toMatch(
        /^paused; would unstake: .*; pod validator-\d is being removed: held until 2026-11-29T12:00:30Z \(resume or scale back up before then\), then unstaked anyway, since it is killed at 2026-11-29T12:01:30Z$/,
      );
      expect(planOne(held, id)).toEqual(d[id]);
    }
  });

  it('from then on, unstakes them as if not paused, while stakes and other actions stay paused', () => {
    const late = scaledDownWhilePaused(NOW + 30_000, {
      desired: [
        ...GENESIS.map((id) => wanted(id)),
        ...['005', '006', '007'].map((id) =>
          unwanted(id, { terminating: true, deletingAt: KILL_AT, ready: false }),
        ),
        wanted('009'), // a stake the pause holds
        unwanted('008', {}), // an unstake whose pod is not being removed (a drain): paused
      ],
      chain: [...SEVEN, '008'].map((id) => row(id)),
    });
    const d = byId(plan(late));
    for (const id of ['005', '006', '007']) {
      expect(d[id]).toMatchObject({ action: ActionKind.unstake, waitingFor: undefined });
      expect(d[id]?.reason).toMatch(
        /^paused, but pod validator-\d is being removed and is killed at 2026-11-29T12:01:30Z: unstaking now, while its node still votes; /,
      );
      expect(planOne(late, id)).toEqual(d[id]);
    }
    expect(d['008']).toMatchObject({ action: ActionKind.unstake, waitingFor: Wait.paused });
    expect(d['009']).toMatchObject({ action: ActionKind.stake, waitingFor: Wait.paused });
  });

  it('the minimum set still holds: a scale to 0 while paused lets only the surplus go', () => {
    const zero = {
      ...input({
        chain: GENESIS.map((id) => row(id)),
        signers: GENESIS,
        desired: GENESIS.map((id) =>
          unwanted(id, { terminating: true, deletingAt: KILL_AT, ready: false }),
        ),
        paused: true,
        minimumSet: { size: 3, source: 'test' },
        settings: { pauseDepartureMarginMs: MARGIN },
      }),
      now: NOW + 60_000,
    };
    const d = byId(plan(zero));
    expect(Object.values(d).filter((x) => x.waitingFor === undefined)).toHaveLength(1);
    expect(Object.values(d).filter((x) => x.waitingFor === Wait.minimumSet)).toHaveLength(3);
  });

  it('a deleted pod the cluster still wants (restarting) and a margin not set: paused as before', () => {
    const restarting = {
      ...input({
        chain: SEVEN.map((id) => row(id)),
        signers: SEVEN,
        desired: SEVEN.map((id) =>
          id === '007' ? wanted(id, { terminating: true, deletingAt: NOW }) : wanted(id),
        ),
        paused: true,
        settings: { pauseDepartureMarginMs: MARGIN },
      }),
      now: NOW + 60_000,
    };
    expect(plan(restarting).every((x) => x.action === 'none')).toBe(true);
    const noMargin = scaledDownWhilePaused(NOW + 60_000, { settings: {} });
    for (const d of plan(noMargin).filter((x) => x.action !== 'none'))
      expect(d.waitingFor).toBe(Wait.paused);
  });
});

describe('PausedDepartures (the Events and the look at the hold’s end)', () => {
  it('reports each held pod once, looks again when its hold ends, and reports the unstake once', async () => {
    const clock = new ManualClock(NOW);
    const events: string[] = [];
    const enqueued: string[] = [];
    const reporter = new PausedDepartures({
      clock,
      logger: pino({ level: 'silent' }),
      marginMs: MARGIN,
      event: (id, _type, reason) => events.push(`${id} ${reason}`),
      enqueue: (id) => enqueued.push(id),
    });
    const desired = scaledDownWhilePaused(NOW).desired;
    reporter.observe(plan(scaledDownWhilePaused(NOW)), desired, new Map(), true);
    reporter.observe(plan(scaledDownWhilePaused(NOW)), desired, new Map(), true);
    expect(events).toEqual(['005 PausedDeparture', '006 PausedDeparture', '007 PausedDeparture']);
    await clock.advance(29_999);
    expect(enqueued).toEqual([]);
    await clock.advance(1);
    expect(enqueued).toEqual(['005', '006', '007']);
    const late = plan(scaledDownWhilePaused(clock.now()));
    // 005's unstake went out already (the plan then says nothing to do for it).
    const open = new Map([['005', action('005', { kind: 'unstake', state: 'sent' })]]);
    const sent = late.map((d) => (d.id === '005' ? { ...d, action: 'none' as const } : d));
    reporter.observe(sent, desired, open, true);
    reporter.observe(late, desired, open, true);
    expect(events.slice(3)).toEqual(['005 PauseYielded', '006 PauseYielded', '007 PauseYielded']);
    // The minimum set's kept validators did not go: not reported as yielded.
    const zero = input({
      chain: GENESIS.map((id) => row(id)),
      desired: GENESIS.map((id) =>
        unwanted(id, { terminating: true, deletingAt: KILL_AT, ready: false }),
      ),
      paused: true,
      minimumSet: { size: 3, source: 'test' },
      settings: { pauseDepartureMarginMs: MARGIN },
    });
    const yielded = events.length;
    reporter.observe(plan({ ...zero, now: clock.now() }), zero.desired, new Map(), true);
    expect(events.slice(yielded).filter((e) => e.endsWith('PauseYielded'))).toHaveLength(1);
    reporter.stop();
  });
});

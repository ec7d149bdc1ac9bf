// The decision rule's table (src/manager/planner/rules.ts) against its documentation
// (docs/decision-rule.md §The rules in code): the same names in the same order with the same codes,
// so that the two cannot drift; and each rule, over inputs built from the planner's fixtures
// (test/support/plan-fixture.ts, the shapes the planner's unit files use), gives only the codes it
// declares — and every rule decides some validator there.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { capabilitiesOf } from '../../src/manager/chain/pocket/capabilities.ts';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';
import { pocketKeys } from '../../src/manager/chain/pocket/pocket-key.ts';
import { KeyStore } from '../../src/manager/keys/key-store.ts';
import { ChainStatus, type ValidatorId } from '../../src/manager/model.ts';
import {
  plan,
  planOne,
  stakeFingerprint,
  unstakeFingerprint,
  type PlanInput,
} from '../../src/manager/planner/plan.ts';
import {
  NO_CODE,
  RULES,
  decideOne,
  decideWithRule,
  ruleContext,
  type Rule,
} from '../../src/manager/planner/rules.ts';
import {
  NOW,
  SETTINGS,
  action,
  input,
  keyOf,
  row,
  unwanted,
  wanted,
  type Scenario,
} from '../support/plan-fixture.ts';
import { keySetOfSecret } from '../../src/manager/discovery/secret-keys.ts';

const DOC = new URL('../../docs/decision-rule.md', import.meta.url);

/** The rows of the table under `## The rules in code`: name and codes, in order. */
function documentedRules(): { name: string; codes: string[] }[] {
  const text = readFileSync(DOC, 'utf8');
  const start = text.indexOf('\n## The rules in code\n');
  expect(start, 'docs/decision-rule.md has a section "The rules in code"').toBeGreaterThan(0);
  const end = text.indexOf('\n## ', start + 1);
  const rows = text
    .slice(start, end)
    .split('\n')
    .filter((line) => /^\| \d+ \|/.test(line));
  return rows.map((line) => {
    const cells = line.split('|').map((c) => c.trim());
    const name = /^`([^`]+)`$/.exec(cells[2] ?? '')?.[1] ?? `unreadable: ${cells[2]}`;
    const codes = (cells[3] ?? '').split(',').map((c) => c.trim().replaceAll('`', ''));
    return { name, codes };
  });
}

describe('the rule table and docs/decision-rule.md', () => {
  it('name the same rules, in the same order, with the same codes', () => {
    const code = RULES.map((r) => ({ name: r.name, codes: [...r.codes] }));
    expect(documentedRules()).toEqual(code);
  });

  it('name each rule once', () => {
    expect(new Set(RULES.map((r) => r.name)).size).toBe(RULES.length);
  });
});

const b64 = (id: string) => Buffer.from(keyOf(id).exportPrivateKeyHex()).toString('base64');
const STARTED = NOW - 60_000;
const CHANGED = NOW - 10_000;
const five = ['001', '002', '003', '004', '005'];

/** A key change (as addresses.unit.test.ts builds it): the Secret's keys, former keys, nodes. */
function changed(s: Scenario, now: Record<ValidatorId, ValidatorId | null>): PlanInput {
  const base = input({ ...s, keys: five });
  const store = new KeyStore(pocketIds, pocketKeys);
  const secret = (rotate: boolean) =>
    Object.fromEntries(
      five.flatMap((id) => {
        const to = rotate && id in now ? now[id] : id;
        return to === null || to === undefined ? [] : [[id, b64(to)]];
      }),
    );
  store.update(keySetOfSecret({ metadata: { resourceVersion: '1' }, data: secret(false) }));
  store.update(keySetOfSecret({ metadata: { resourceVersion: '2' }, data: secret(true) }));
  const seenAt = (id: ValidatorId) => (id in now ? CHANGED : STARTED - 3_600_000);
  return {
    ...base,
    keys: store,
    keysSeen: new Map(
      five.map((id) => [id, { address: keyOf(now[id] ?? id).address, observedAt: seenAt(id) }]),
    ),
    formerKeys: new Map(
      Object.keys(now).map((id) => [
        id,
        [{ address: keyOf(id).address, observedAt: STARTED - 3_600_000, replacedAt: CHANGED }],
      ]),
    ),
    nodeKeys: new Map(
      five.map((id) => [`uid-${id}`, { address: keyOf(id).address, startedAt: STARTED }]),
    ),
  };
}

const started = { startedAt: STARTED };
const staked5: Scenario = { chain: five.map((id) => row(id)), signers: five };
const v1 = { capabilities: capabilitiesOf('v1') };
const key005 = keyOf('005');
const stakeFp = stakeFingerprint(key005, SETTINGS, 'v005:42069');

/** Inputs for every row of the table, in the fixtures' shapes. */
const INPUTS: Record<string, PlanInput> = {
  'not synced': input({ synced: false, keys: [], desired: [wanted('005')] }),
  'key removed, not wanted': changed(
    {
      ...staked5,
      desired: [...five.slice(0, 4).map((id) => wanted(id, started)), unwanted('005', started)],
    },
    { '005': null },
  ),
  'key missing': input({ keys: [], desired: [wanted('005'), unwanted('006')] }),
  'key shared and malformed': input({
    keys: ['005'],
    extraSecretData: { '006': b64('005'), '007': 'bm90IGEga2V5' },
    desired: [wanted('005'), wanted('006'), wanted('007')],
  }),
  'pod conflict': input({ desired: [{ ...wanted('005'), conflict: 'pods a and b claim 005' }] }),
  'in flight': input({ desired: [wanted('005')], open: [action('005')] }),
  'committed ahead': input({
    desired: [wanted('005')],
    latest: [action('005', { state: 'committed', committedHeight: 105 })],
  }),
  rotation: changed(
    { ...staked5, desired: five.map((id) => wanted(id, started)) },
    { '005': '015' },
  ),
  'rotation refused': changed(
    { ...staked5, desired: five.map((id) => wanted(id, started)), settings: v1 },
    { '005': '015' },
  ),
  mempool: input({ desired: [wanted('005')], mempool: [{ id: '005', kind: 'stake' }] }),
  held: input({ desired: [wanted('005', { held: true })] }),
  'never votes': input({
    desired: [wanted('005')],
    chain: [row('005')],
    stakeHeights: { '005': 50 },
    settings: v1,
  }),
  'signed elsewhere': {
    ...input({ desired: [wanted('005', started)], chain: [row('005')], signers: ['005'] }),
    nodeKeys: new Map([['uid-005', { address: keyOf('006').address, startedAt: STARTED }]]),
  },
  'staked and paused': input({
    desired: [wanted('005'), wanted('006')],
    chain: [row('005'), row('006', ChainStatus.paused)],
    signers: ['005'],
  }),
  'stale key': input({ desired: [wanted('005', started)], keysSeen: { '005': CHANGED } }),
  'pod not Ready': input({ desired: [wanted('005', { ready: false }), wanted('006', null)] }),
  'no service URL': input({ desired: [wanted('005', { serviceUrl: undefined })] }),
  'stake failed': input({
    desired: [wanted('005')],
    latest: [action('005', { state: 'failed', terminal: true, fingerprint: stakeFp })],
  }),
  debounce: input({ desired: [wanted('005', { readySince: NOW - 500, flapped: true })] }),
  'node syncing': input({ desired: [wanted('005'), wanted('006')], nodeHeights: { '005': 50 } }),
  stake: input({ desired: [wanted('005')] }),
  'unstake failed': input({
    desired: [unwanted('005')],
    chain: [row('005')],
    latest: [
      action('005', {
        kind: 'unstake',
        state: 'failed',
        terminal: true,
        fingerprint: unstakeFingerprint(key005),
      }),
    ],
  }),
  'unstake and unstaked': input({
    desired: [unwanted('005'), unwanted('006')],
    chain: [row('005'), row('006', ChainStatus.unstaked)],
  }),
};

describe('each rule gives only the codes it declares', () => {
  const decided = new Map<string, Rule>();
  for (const [name, i] of Object.entries(INPUTS)) {
    it(name, () => {
      const ids = plan(i).flatMap((d) => (d.id === undefined ? [] : [d.id]));
      expect(ids.length).toBeGreaterThan(0);
      for (const id of ids) {
        const { rule, draft } = decideWithRule(ruleContext(id, i));
        expect(rule.codes, `${rule.name} decided ${id} with ${draft.code}`).toContain(
          draft.code ?? NO_CODE,
        );
        expect(decideOne(id, i)).toEqual(draft);
        // The rules decide what plan() and planOne() then limit: the two still agree.
        expect(planOne(i, id)).toEqual(plan(i).find((d) => d.id === id));
        decided.set(rule.name, rule);
      }
    });
  }

  it('and every rule decides some validator of these inputs', () => {
    expect(RULES.filter((r) => !decided.has(r.name)).map((r) => r.name)).toEqual([]);
  });
});

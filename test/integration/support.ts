// Shared set-up of the integration and scenario files: one devnet per file (started in beforeAll,
// stopped in afterAll even when a test failed, with a check that no process it ran is left),
// argv sampled all along for the key-leak check, and the manager's log tail printed when a test
// fails.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import {
  CommandLineSampler,
  findKeys,
  Harness,
  keyNeedles,
  type HarnessOptions,
} from '../../src/harness/index.ts';

/** Fast manager settings for tests (the devnet's defaults are for people). */
export const FAST_MANAGER: Record<string, string> = {
  CM_READY_DEBOUNCE: '500ms',
  CM_CHAIN_POLL_INTERVAL: '200ms',
  CM_RESYNC_INTERVAL: '5s',
};

export interface DevnetFixture {
  /** The running harness (throws before beforeAll ran). */
  readonly h: Harness;
  /** Every argv seen below this process while the file ran. */
  readonly argv: CommandLineSampler;
}

/** Starts a devnet for the whole file; returns a fixture whose fields are valid inside tests. */
export function useDevnet(
  name: string,
  options: Omit<HarnessOptions, 'dir'> & { managerEnv?: Record<string, string> } = {},
): DevnetFixture {
  let harness: Harness | undefined;
  let sampler: CommandLineSampler | undefined;
  let dir: string | undefined;
  let failed = false;
  /** The start under way: vitest gives up on a slow beforeAll but the start goes on. */
  let starting: Promise<Harness> | undefined;
  /** A harness that finished starting after beforeAll gave up: stopped, not checked. */
  let late: Harness | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), `cm-${name}-`));
    sampler = new CommandLineSampler();
    starting = Harness.start({
      ...options,
      dir,
      managerEnv: { ...FAST_MANAGER, ...options.managerEnv },
    });
    harness = await starting;
  }, 90_000);
  afterAll(async () => {
    sampler?.stop();
    if (harness === undefined && starting !== undefined) {
      // beforeAll timed out while the devnet was still starting: wait for the start to end and stop
      // what it started, or its manager and nodes outlive this file (and load every file after it).
      failed = true;
      late = await starting.catch(() => undefined);
      harness = late;
    }
    try {
      // Every file that ran a devnet proves no key reached a log, an argv or an answer.
      if (harness !== undefined && late === undefined) await expectNoKeyLeaks(fixture);
    } catch (error: unknown) {
      failed = true;
      throw error;
    } finally {
      await stopAndClean();
    }
  }, 180_000);
  const stopAndClean = async (): Promise<void> => {
    try {
      await harness?.stop();
    } finally {
      // A failed file keeps its folder (logs of the manager and every node) for a post-mortem.
      if (failed) process.stderr.write(`devnet folder kept for inspection: ${dir ?? '?'}\n`);
      else if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    }
  };
  const fixture: DevnetFixture = {
    get h() {
      if (harness === undefined) throw new Error('the devnet did not start');
      return harness;
    },
    get argv() {
      if (sampler === undefined) throw new Error('the devnet did not start');
      return sampler;
    },
  };
  beforeEach((context) => {
    context.onTestFailed(async () => {
      failed = true;
      await printManagerLog(fixture);
    });
  });
  return fixture;
}

/** Prints the last lines of the manager's log when a test fails. */
async function printManagerLog(fixture: DevnetFixture, lines = 60): Promise<void> {
  const log = fixture.h.info.managerLog;
  if (log === null) return;
  const text = await readFile(log, 'utf8').catch(() => '');
  process.stderr.write(
    `--- last ${lines} lines of ${log} ---\n${text.split('\n').slice(-lines).join('\n')}\n`,
  );
}

/**
 * Asserts that no key of the Secret is in any log or argv this file produced, nor in what the
 * manager answers (status, plan, journal) or the Events it recorded.
 */
export async function expectNoKeyLeaks(fixture: DevnetFixture): Promise<void> {
  const { h, argv } = fixture;
  argv.sample();
  const { leaks, scannedFiles, scannedProcesses } = await h.keyLeaks(argv.seen);
  expect(scannedFiles).toBeGreaterThan(1);
  expect(scannedProcesses).toBeGreaterThan(1);
  expect(leaks).toEqual([]);
  const needles = keyNeedles(await h.privateKeys());
  const events = await h.core.listNamespacedEvent({ namespace: h.info.namespace });
  // A manager a test left stopped has no answers to scan.
  const answers = await Promise.all([h.validators(), h.actions(), h.manager('/v1/plan')]).catch(
    () => [],
  );
  const text = JSON.stringify([events.items.map((e) => e.message), answers]);
  expect(findKeys(text, needles, 'Events and control-RPC answers')).toEqual([]);
}

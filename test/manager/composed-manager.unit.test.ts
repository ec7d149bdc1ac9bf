// The composed manager's lifecycle (compose.ts's managerStartOrder over the parts of manager.ts,
// runnable.ts's group) on fake ports: the in-memory toy chain behind the chain port and static
// discovery over in-memory files with a fake node probe; a real journal in a temporary folder.
// Each part is wrapped only to record when it starts and stops: parts start in order, stop in
// reverse, a start that fails stops what started and names the part, and stop() is idempotent.
// Leader election is a part of its own over a fake elector (parts/leader-election.ts's Elector):
// the loop's workers run only while it leads, and the loop stops before the lease is released.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { composedOptions } from '../../src/manager/compose.ts';
import { loadConfig } from '../../src/manager/config.ts';
import { StaticDiscovery } from '../../src/manager/discovery/static-source.ts';
import { ManagerError } from '../../src/manager/errors.ts';
import { Manager } from '../../src/manager/manager.ts';
import { Metrics } from '../../src/manager/metrics.ts';
import type { Elector, ElectorCallbacks } from '../../src/manager/parts/leader-election.ts';
import type { PauseRecord } from '../../src/manager/pause/pause-state.ts';
import type { Runnable } from '../../src/manager/runnable.ts';
import { ToyChain, toyKey } from '../support/toy-chain.ts';

const dir = mkdtempSync(join(tmpdir(), 'composed-manager-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const files = {
  read: (path: string) =>
    Promise.resolve(
      path === '/v.yaml'
        ? 'validators: [{id: "val-1", rpc: "http://127.0.0.1:1", serviceUrl: "127.0.0.1:2"}]'
        : '{}',
    ),
  mode: () => Promise.resolve(0o100600),
};

const START_ORDER = [
  'journal binding',
  'leftover keybases',
  'chain view',
  'discovery',
  'leader election',
  'reconcile loop',
];

/** A manager composed as `run` composes it, its parts' starts and stops written to `log`. */
function composed(
  name: string,
  log: string[],
  discoveryStart?: () => Promise<void>,
  elector?: (callbacks: ElectorCallbacks) => Elector,
  pauseRecord?: PauseRecord,
): Manager {
  const config = loadConfig({
    env: {
      CM_CHAIN_RPC_URL: 'http://127.0.0.1:1',
      CM_CHAIN_POLL_INTERVAL_MS: '100',
      CM_DISCOVERY: 'static',
      CM_VALIDATORS_FILE: '/v.yaml',
      CM_KEYS_FILE: '/k.yaml',
      CM_JOURNAL_PATH: join(dir, `${name}.sqlite`),
    },
  });
  const options = composedOptions({
    config,
    logger: pino({ level: 'silent' }),
    hooks: [],
    metrics: new Metrics(),
    chain: new ToyChain([toyKey('alice')]).port(),
    election: elector,
    discovery: (deps) => {
      const source = new StaticDiscovery({
        ...deps,
        validatorsFile: '/v.yaml',
        keysFile: '/k.yaml',
        files,
        probe: () => Promise.resolve(),
      });
      if (discoveryStart !== undefined) source.start = discoveryStart;
      if (pauseRecord !== undefined) Object.assign(source, { pauseRecord: () => pauseRecord });
      return source;
    },
  });
  const watched = (part: Runnable): Runnable => ({
    name: part.name,
    start: async (signal) => {
      log.push(`start ${part.name}`);
      await part.start(signal);
    },
    stop: async () => {
      log.push(`stop ${part.name}`);
      await part.stop();
    },
  });
  return new Manager({ ...options, order: (parts) => options.order(parts).map(watched) });
}

describe('the composed manager', () => {
  it('starts its parts in order, is ready, stops them in reverse, once', async () => {
    const log: string[] = [];
    const manager = composed('in-order', log);
    const read = manager.readModel();
    await manager.start();
    expect(log).toEqual(START_ORDER.map((p) => `start ${p}`));
    expect(read.informersSynced()).toBe(true);
    await vi.waitFor(() => {
      expect(read.isReady()).toBe(true);
    }, 5_000);
    expect(read.journalState().chain).toBeDefined();
    log.length = 0;
    await Promise.all([manager.stop(), manager.stop()]);
    await manager.stop();
    expect(log).toEqual(START_ORDER.toReversed().map((p) => `stop ${p}`));
    // The journal is closed: its pages cannot be read any more.
    expect(() => read.actions.page({ limit: 1 })).toThrow();
  });

  it('a discovery that cannot start: the parts started stop in reverse, the error names it', async () => {
    const log: string[] = [];
    const manager = composed('failing', log, () =>
      Promise.reject(new ManagerError('KUBE_UNAVAILABLE', 'the API server refused')),
    );
    await expect(manager.start()).rejects.toMatchObject({
      name: 'RunnableStartError',
      part: 'discovery',
      code: 'KUBE_UNAVAILABLE',
      message: 'discovery did not start: the API server refused',
    });
    expect(log).toEqual([
      'start journal binding',
      'start leftover keybases',
      'start chain view',
      'start discovery',
      'stop chain view',
      'stop leftover keybases',
      'stop journal binding',
    ]);
    log.length = 0;
    await manager.stop();
    expect(log).toEqual([]);
  });

  it('a stop while the loop still reads an unreadable pause record ends its start: no worker starts', async () => {
    // Found in review: the loop's start retried the record's read without the group's signal, so
    // a SIGTERM waited for a read that never answers (a Role without `get leases`, the API down).
    const log: string[] = [];
    let reads = 0;
    const unreadable: PauseRecord = {
      where: 'an unreadable record',
      read: () => {
        reads++;
        return Promise.reject(new ManagerError('KUBE_UNAVAILABLE', 'the API server refused'));
      },
      write: () => Promise.resolve(),
    };
    const manager = composed('unreadable-pause', log, undefined, undefined, unreadable);
    const read = manager.readModel();
    const started = manager.start();
    await vi.waitFor(() => {
      expect(reads).toBeGreaterThan(0);
    }, 5_000);
    expect(log.at(-1)).toBe('start reconcile loop');
    await manager.stop();
    await expect(started).resolves.toBeUndefined();
    expect(log.slice(START_ORDER.length)).toEqual(START_ORDER.toReversed().map((p) => `stop ${p}`));
    expect(read.isReady()).toBe(false);
  });

  it('a manager never started still closes its journal when stopped', async () => {
    const log: string[] = [];
    const manager = composed('never-started', log);
    const read = manager.readModel();
    await manager.stop();
    expect(log).toEqual([]);
    expect(() => read.actions.page({ limit: 1 })).toThrow();
  });

  it('elects: the workers run only while leading; the loop stops before the lease goes', async () => {
    const log: string[] = [];
    let callbacks: ElectorCallbacks | undefined;
    let leading = false;
    const elector = (given: ElectorCallbacks): Elector => {
      callbacks = given;
      return {
        get isLeader() {
          return leading;
        },
        holder: 'another',
        term: undefined,
        mayAct: () => leading,
        start: () => {
          log.push('elector started');
          // Its first read of the record: no pause on it (a Lease's read tells followers so).
          given.onPauseRead(undefined, 0);
        },
        stop: () => {
          log.push('elector stopped');
          return Promise.resolve();
        },
      };
    };
    const manager = composed('elected', log, undefined, elector);
    const read = manager.readModel();
    await manager.start();
    expect(log).toEqual([
      ...START_ORDER.slice(0, 5).map((p) => `start ${p}`),
      'elector started',
      'start reconcile loop',
    ]);
    // A follower: ready (synced) without workers, and it refuses to pause naming the leader.
    await vi.waitFor(() => {
      expect(read.isReady()).toBe(true);
    }, 5_000);
    expect(read.isLeader).toBe(false);
    expect(read.leaderIdentity).toBe('another');
    // No worker runs: what the sync queued waits for the leadership.
    expect(read.queueDepth).toBeGreaterThan(0);
    await expect(manager.setPaused(true)).rejects.toMatchObject({
      code: 'NOT_LEADER',
      details: { leader: 'another' },
    });
    // Leading: the workers start and the validators are looked at.
    leading = true;
    callbacks?.onStartedLeading();
    expect(read.isLeader).toBe(true);
    await manager.drained();
    expect(read.queueDepth).toBe(0);
    log.length = 0;
    await manager.stop();
    expect(log).toEqual([
      'stop reconcile loop',
      'stop leader election',
      'elector stopped',
      'stop discovery',
      'stop chain view',
      'stop leftover keybases',
      'stop journal binding',
    ]);
  });

  it('an elector that cannot start: the error names leader election, the rest stop', async () => {
    const log: string[] = [];
    const manager = composed('election-fails', log, undefined, () => ({
      isLeader: false,
      holder: undefined,
      term: undefined,
      mayAct: () => false,
      start: () => {
        throw new ManagerError('KUBE_UNAVAILABLE', 'leases are forbidden');
      },
      stop: () => Promise.resolve(),
    }));
    await expect(manager.start()).rejects.toMatchObject({
      name: 'RunnableStartError',
      part: 'leader election',
      code: 'KUBE_UNAVAILABLE',
      message: 'leader election did not start: leases are forbidden',
    });
    expect(log).toEqual([
      ...START_ORDER.slice(0, 5).map((p) => `start ${p}`),
      ...START_ORDER.slice(0, 4)
        .toReversed()
        .map((p) => `stop ${p}`),
    ]);
    await manager.stop();
  });
});

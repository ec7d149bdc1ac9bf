// The control RPC of a manager on static discovery, through inject() (no socket): scale answers
// 501 SCALE_UNSUPPORTED with the reason (nothing to scale: edit the validators file), reaches no
// scaler, and readyz and plan say the discovery mode. A real Manager and ManagerControlPlane over
// an in-memory disk and a fake node probe; the manager is not started (no chain is needed).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/manager/config.ts';
import { StaticDiscovery } from '../../src/manager/discovery/static-source.ts';
import type { Manager } from '../../src/manager/manager.ts';
import { Metrics } from '../../src/manager/metrics.ts';
import {
  composeManager,
  controlPlaneOf,
  kubernetesOf,
  replicaTargetOf,
} from '../../src/manager/compose.ts';
import { buildServer, type ControlServer } from '../../src/manager/rpc/server.ts';
import { Scaler } from '../../src/manager/scale/scaler.ts';

const TOKEN = 'unit-test-token-0123456789abcdef';
const files = {
  read: (path: string) =>
    Promise.resolve(
      path === '/v.yaml'
        ? 'validators: [{id: "001", rpc: "http://127.0.0.1:1", serviceUrl: "127.0.0.1:2"}]'
        : '{}',
    ),
  mode: () => Promise.resolve(0o100600),
};

let dir: string;
let manager: Manager;
let app: ControlServer;
let scalerCalls = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'static-scale-'));
  const config = loadConfig({
    env: {
      CM_CHAIN_RPC_URL: 'http://127.0.0.1:1',
      CM_DISCOVERY: 'static',
      CM_VALIDATORS_FILE: '/v.yaml',
      CM_KEYS_FILE: '/k.yaml',
      CM_JOURNAL_PATH: join(dir, 'journal.sqlite'),
    },
  });
  const logger = pino({ level: 'silent' });
  manager = composeManager({
    config,
    logger,
    hooks: [],
    metrics: new Metrics(),
    discovery: (deps) =>
      new StaticDiscovery({
        ...deps,
        validatorsFile: '/v.yaml',
        keysFile: '/k.yaml',
        files,
        probe: () => Promise.resolve(),
      }),
  });
  const control = controlPlaneOf(manager, (ports) => {
    const scaler = new Scaler(ports);
    scaler.scale = () => {
      scalerCalls++;
      return Promise.reject(new Error('the scaler must not be reached'));
    };
    return scaler;
  });
  app = await buildServer({
    control,
    token: TOKEN,
    logger,
    version: 'unit',
  });
});

afterAll(async () => {
  await app.close();
  await manager.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a manager on static discovery', () => {
  it('answers scale with 501 SCALE_UNSUPPORTED naming the file, and reaches no scaler', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/v1/scale',
      headers: { authorization: `Bearer ${TOKEN}` },
      payload: { replicas: 6 },
    });
    expect(response.statusCode).toBe(501);
    expect(response.json()).toEqual({
      error: {
        code: 'SCALE_UNSUPPORTED',
        message:
          'static discovery has nothing to scale: the validators are the ones listed in /v.yaml; add or remove entries there to stake or unstake them',
        details: { discovery: 'static' },
      },
    });
    expect(scalerCalls).toBe(0);
  });

  it('says so in readyz and plan', async () => {
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.json()).toMatchObject({ discovery: 'static', ready: false });
    const plan = await app.inject({
      url: '/v1/plan',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(plan.json()).toMatchObject({ discovery: 'static', actions: [] });
  });

  it('has no cluster behind it', () => {
    expect(kubernetesOf(manager)).toBeUndefined();
    expect(replicaTargetOf(manager).statefulSets()).toEqual([]);
  });
});

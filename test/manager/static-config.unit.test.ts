// Static discovery's configuration: the settings and their cross-checks, and the start-time
// check of both files (a temp dir on disk; every problem named with its variable and code).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/manager/config.ts';
import { staticFileProblems } from '../../src/manager/discovery/static-check.ts';
import { generateKeys } from '../../src/pocket/index.ts';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';

const BASE = { CM_CHAIN_RPC_URL: 'http://127.0.0.1:1' };

function problems(env: Record<string, string>): readonly string[] {
  try {
    loadConfig({ env: { ...BASE, ...env } });
  } catch (error: unknown) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('static discovery settings', () => {
  it('default to Kubernetes discovery; static takes both files from env or flags', () => {
    expect(loadConfig({ env: BASE }).discovery).toBe('kubernetes');
    const config = loadConfig({
      env: { ...BASE, CM_DISCOVERY: 'static', CM_KEYS_FILE: '/k.yaml' },
      flags: { 'validators-file': '/v.yaml' },
    });
    expect(config).toMatchObject({
      discovery: 'static',
      validatorsFile: '/v.yaml',
      keysFile: '/k.yaml',
    });
  });

  it('name each missing file and a Lease asked for without a cluster, all at once', () => {
    expect(problems({ CM_DISCOVERY: 'static', CM_LEADER_ELECTION: 'true' })).toEqual([
      'CM_VALIDATORS_FILE is required when CM_DISCOVERY is "static"',
      'CM_KEYS_FILE is required when CM_DISCOVERY is "static"',
      'CM_LEADER_ELECTION needs CM_DISCOVERY "kubernetes" (the Lease lives in the cluster); static discovery runs one manager',
    ]);
    expect(problems({ CM_DISCOVERY: 'files' })).toEqual([
      'CM_DISCOVERY: expected one of kubernetes, static, got "files"',
    ]);
  });
});

describe('the start-time check of the static files', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const dir = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'static-config-'));
    dirs.push(d);
    return d;
  };
  const key = generateKeys({ count: 1, seed: 'static-config' }).get('001')?.exportPrivateKeyHex();

  it('passes good files', () => {
    const d = dir();
    writeFileSync(
      join(d, 'v.yaml'),
      'validators: [{id: "001", rpc: "http://127.0.0.1:1", serviceUrl: "127.0.0.1:2"}]',
    );
    writeFileSync(join(d, 'k.yaml'), `"001": "${key}"\n`, { mode: 0o600 });
    expect(
      staticFileProblems(
        { validatorsFile: join(d, 'v.yaml'), keysFile: join(d, 'k.yaml') },
        pocketIds,
      ),
    ).toEqual([]);
  });

  it('names a missing validators file and a keys file others may read', () => {
    const d = dir();
    writeFileSync(join(d, 'k.yaml'), `"001": "${key}"\n`);
    chmodSync(join(d, 'k.yaml'), 0o644);
    const v = join(d, 'missing.yaml');
    const k = join(d, 'k.yaml');
    expect(staticFileProblems({ validatorsFile: v, keysFile: k }, pocketIds)).toEqual([
      `CM_VALIDATORS_FILE ${v}: VALIDATORS_FILE_INVALID: cannot read it (ENOENT)`,
      `CM_KEYS_FILE ${k}: KEYS_FILE_INSECURE: users other than its owner may read or write it (mode 644); chmod 600 it`,
    ]);
  });
});

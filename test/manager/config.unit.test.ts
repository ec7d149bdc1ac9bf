import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  ConfigSchema,
  loadConfig,
  redactedConfig,
  SETTINGS,
} from '../../src/manager/config.ts';

const base = { CM_CHAIN_RPC_URL: 'http://127.0.0.1:50832/' };
const noFiles = { readFile: () => undefined };

function problems(env: Record<string, string>, flags?: Record<string, string>): string[] {
  try {
    loadConfig({ env, ...(flags ? { flags } : {}), ...noFiles });
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('loadConfig', () => {
  it('applies the defaults and returns a frozen object', () => {
    const config = loadConfig({ env: base, ...noFiles });
    expect(config).toMatchObject({
      chainRpcUrl: 'http://127.0.0.1:50832',
      podSelector: 'pokt.network/purpose=validator',
      idMapping: 'ordinal',
      keysSecret: 'validators-private-keys',
      txMode: 'rpc',
      stakeAmount: '150000000001',
      stakeChains: ['0001'],
      resyncIntervalMs: 30_000,
      readyDebounceMs: 2_000,
      rpcPort: 8080,
      rpcHost: '0.0.0.0',
      leaderElection: false,
      namespace: undefined,
      restartStalePods: true,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('CM_RESTART_STALE_PODS=false: a pod started before its key is only reported', () => {
    const config = loadConfig({ env: { ...base, CM_RESTART_STALE_PODS: 'false' }, ...noFiles });
    expect(config.restartStalePods).toBe(false);
  });

  it('reports every problem at once, each by its variable', () => {
    const found = problems({
      CM_TX_MODE: 'carrier-pigeon',
      CM_RESYNC_INTERVAL: 'soon',
      CM_STAKE_AMOUNT: '-5',
      CM_RPC_PORT: '70000',
      CM_LEADER_ELECTION: 'maybe',
      CM_ID_PATTERN: '(',
    });
    expect(found).toHaveLength(7);
    expect(found.join('\n')).toMatch(/CM_CHAIN_RPC_URL is required/);
    for (const name of [
      'CM_TX_MODE',
      'CM_RESYNC_INTERVAL',
      'CM_STAKE_AMOUNT',
      'CM_RPC_PORT',
      'CM_LEADER_ELECTION',
      'CM_ID_PATTERN',
    ]) {
      expect(found.some((p) => p.startsWith(name))).toBe(true);
    }
  });

  it('refuses a URL with credentials and never echoes them (they would reach logs and /readyz)', () => {
    const found = problems({ CM_CHAIN_RPC_URL: 'http://admin:S3cretPassw0rd@127.0.0.1:1' });
    expect(found).toEqual([expect.stringMatching(/^CM_CHAIN_RPC_URL: a URL with credentials/)]);
    const bad = problems({ CM_CHAIN_RPC_URL: 'ftp://admin:S3cret@host' });
    expect(bad).toEqual([
      expect.stringMatching(/expected an http\(s\) URL, got "ftp:\/\/\*\*\*@host"/),
    ]);
    expect([...found, ...bad].join('\n')).not.toMatch(/S3cret/);
  });

  it('checks combinations: cli mode needs an absolute CLI path, lease timings must nest', () => {
    expect(problems({ ...base, CM_TX_MODE: 'cli' })).toEqual([
      expect.stringMatching(/^CM_CLI_PATH is required/),
    ]);
    expect(problems({ ...base, CM_TX_MODE: 'cli', CM_CLI_PATH: 'p1' })).toEqual([
      expect.stringMatching(/^CM_CLI_PATH: expected an absolute path/),
    ]);
    expect(problems({ ...base, CM_RENEW_DEADLINE: '20s' })).toEqual([
      expect.stringMatching(/CM_RETRY_PERIOD < CM_RENEW_DEADLINE < CM_LEASE_DURATION/),
    ]);
    expect(
      problems({ ...base, CM_ID_MAPPING: 'pattern', CM_ID_PATTERN: 'validator-\\d+' }),
    ).toEqual([expect.stringMatching(/capture group/)]);
  });

  it('lets flags win over the environment and names the flag in problems', () => {
    expect(
      loadConfig({ env: { ...base, CM_RPC_PORT: '1' }, flags: { 'rpc-port': '9999' }, ...noFiles })
        .rpcPort,
    ).toBe(9999);
    expect(problems(base, { 'rpc-port': 'x' })).toEqual([
      expect.stringMatching(/^--rpc-port: expected an integer/),
    ]);
  });

  it('reads the token from a file, never echoes it, and requires a long one', () => {
    const secret = 's3cr3t-token-0123456789';
    const config = loadConfig({
      env: { ...base, CM_RPC_TOKEN_FILE: '/t' },
      readFile: (p) => (p === '/t' ? `${secret}\n` : undefined),
    });
    expect(config.rpcToken).toBe(secret);
    expect(JSON.stringify(redactedConfig(config))).not.toContain(secret);
    const short = problems({ ...base, CM_RPC_TOKEN: 'short' });
    expect(short).toEqual(['CM_RPC_TOKEN: must be at least 16 characters']);
  });

  it('takes the namespace from the service account when not configured, and HOST for the RPC address', () => {
    const config = loadConfig({
      env: { ...base, HOST: '127.0.0.1' },
      readFile: (p) => (p.endsWith('/namespace') ? 'chain\n' : undefined),
    });
    expect(config.namespace).toBe('chain');
    expect(config.rpcHost).toBe('127.0.0.1');
  });

  it('has a unique env variable and flag for every setting', () => {
    expect(new Set(SETTINGS.map((s) => s.env)).size).toBe(SETTINGS.length);
    expect(new Set(SETTINGS.map((s) => s.flag)).size).toBe(SETTINGS.length);
  });
});

describe('the configuration schema', () => {
  it('declares each setting once: SETTINGS (flags, docs) are read off it, in its order', () => {
    expect(SETTINGS.map((s) => s.key)).toEqual(Object.keys(ConfigSchema.properties));
    expect(SETTINGS.find((s) => s.key === 'concurrency')).toEqual({
      key: 'concurrency',
      env: 'CM_CONCURRENCY',
      flag: 'concurrency',
      kind: 'int',
      default: '32',
      min: 1,
      max: 256,
      description: expect.stringMatching(/^Validators reconciled at once\./) as string,
    });
    expect(SETTINGS.find((s) => s.key === 'rpcToken')).toMatchObject({ secret: true });
  });

  it('accepts what loadConfig builds and refuses a value of the wrong type or range', () => {
    const config = loadConfig({ env: { ...base, CM_MIN_VALIDATORS: '3' }, ...noFiles });
    expect(Value.Check(ConfigSchema, config)).toBe(true);
    expect(Value.Check(ConfigSchema, { ...config, concurrency: 0 })).toBe(false);
    expect(Value.Check(ConfigSchema, { ...config, idPattern: '^v-(\\d+)$' })).toBe(false);
    expect(Value.Check(ConfigSchema, { ...config, txMode: 'grpc' })).toBe(false);
    expect(Value.Check(ConfigSchema, { ...config, minValidators: 'some' })).toBe(false);
    expect(Value.Check(ConfigSchema, { ...config, cliPath: undefined })).toBe(true);
    expect(Value.Check(ConfigSchema, { ...config, chainRpcUrl: undefined })).toBe(false);
  });
});

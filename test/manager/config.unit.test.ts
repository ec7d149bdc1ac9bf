import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  ConfigSchema,
  loadConfig,
  redactedConfig,
  SETTINGS,
} from '../../src/manager/config.ts';
import { defineChain } from '../../src/manager/chain/definition.ts';
import { pocketV1Settings } from '../../src/manager/chain/pocket/definition.ts';
import { knownChains, registerChain } from '../../src/manager/chain/registry.ts';
import { text } from '../../src/manager/settings.ts';

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
      chain: 'pocket-v1',
      chainSettings: {
        profile: 'intended',
        txMode: 'rpc',
        cliPath: undefined,
        cliTimeoutMs: 30_000,
        cliConfigPath: undefined,
        cliGenesisPath: undefined,
        stakeAmount: '150000000001',
        relayChains: ['0001'],
      },
      resyncIntervalMs: 30_000,
      readyDebounceMs: 2_000,
      rpcPort: 8080,
      rpcHost: '0.0.0.0',
      leaderElection: false,
      namespace: undefined,
      restartStalePods: true,
    });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.chainSettings)).toBe(true);
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

  it("the control RPC's connection cap and headers timeout are settings, refused by name when zero, negative or oversized", () => {
    const config = loadConfig({ env: base, ...noFiles });
    expect(config).toMatchObject({ rpcMaxConnections: 1024, rpcHeadersTimeoutMs: 10_000 });
    const set = loadConfig({
      env: { ...base, CM_RPC_MAX_CONNECTIONS: '64', CM_RPC_HEADERS_TIMEOUT: '3s' },
      ...noFiles,
    });
    expect(set).toMatchObject({ rpcMaxConnections: 64, rpcHeadersTimeoutMs: 3_000 });
    const flagged = loadConfig({
      env: base,
      flags: { 'rpc-max-connections': '80', 'rpc-headers-timeout': '1s' },
      ...noFiles,
    });
    expect(flagged).toMatchObject({ rpcMaxConnections: 80, rpcHeadersTimeoutMs: 1_000 });
    for (const [value, why] of [
      ['0', 'CM_RPC_MAX_CONNECTIONS: must be at least 64, got "0"'],
      ['-5', 'CM_RPC_MAX_CONNECTIONS: must be at least 64, got "-5"'],
      ['63', 'CM_RPC_MAX_CONNECTIONS: must be at least 64, got "63"'],
      ['16385', 'CM_RPC_MAX_CONNECTIONS: must be at most 16384, got "16385"'],
      ['1e9', 'CM_RPC_MAX_CONNECTIONS: expected an integer, got "1e9"'],
      ['lots', 'CM_RPC_MAX_CONNECTIONS: expected an integer, got "lots"'],
    ] as const)
      expect(problems({ ...base, CM_RPC_MAX_CONNECTIONS: value }), value).toEqual([why]);
    // 0 would turn Node's headers timeout off altogether.
    for (const [value, why] of [
      ['0', 'CM_RPC_HEADERS_TIMEOUT: must be at least 1s, got "0"'],
      ['0s', 'CM_RPC_HEADERS_TIMEOUT: must be at least 1s, got "0s"'],
      ['-1s', 'CM_RPC_HEADERS_TIMEOUT: expected a duration such as 500ms, 30s or 2m, got "-1s"'],
      ['999ms', 'CM_RPC_HEADERS_TIMEOUT: must be at least 1s, got "999ms"'],
      ['121s', 'CM_RPC_HEADERS_TIMEOUT: must be at most 2m, got "121s"'],
      ['soon', 'CM_RPC_HEADERS_TIMEOUT: expected a duration such as 500ms, 30s or 2m, got "soon"'],
    ] as const)
      expect(problems({ ...base, CM_RPC_HEADERS_TIMEOUT: value }), value).toEqual([why]);
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
      expect.stringMatching(/^CM_POCKET_V1_CLI_PATH \(or CM_CLI_PATH\) is required/),
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
    expect(Value.Check(ConfigSchema, { ...config, pacing: 'grpc' })).toBe(false);
    expect(Value.Check(ConfigSchema, { ...config, minValidators: 'some' })).toBe(false);
    expect(Value.Check(ConfigSchema, { ...config, hooksFile: undefined })).toBe(true);
    expect(Value.Check(ConfigSchema, { ...config, chainRpcUrl: undefined })).toBe(false);
  });
});

describe('the chain registry and its settings', () => {
  /** A chain registered for the length of one test. */
  const unitChain = defineChain({
    name: 'unit-chain',
    summary: 'A chain of this test.',
    settings: {
      level: text({
        env: 'CM_UNIT_CHAIN_LEVEL',
        flag: 'unit-chain-level',
        default: 'low',
        description: 'A setting of the unit chain.',
      }),
    },
    ids: { prefix: 'u', width: 2, min: 1, max: 20 },
    errors: {},
    port: () => {
      throw new Error('not built in this test');
    },
  });

  it('selects pocket-v1 by default, and refuses an unknown chain naming the known ones', () => {
    expect(loadConfig({ env: base, ...noFiles }).chain).toBe('pocket-v1');
    expect(problems({ ...base, CM_CHAIN: 'no-such-chain' })).toEqual([
      'CM_CHAIN: unknown chain "no-such-chain"; known chains: pocket-v1',
    ]);
    expect(problems(base, { chain: 'no-such-chain' })).toEqual([
      '--chain: unknown chain "no-such-chain"; known chains: pocket-v1',
    ]);
  });

  it("reads a chain's namespaced settings, and its older names as aliases", () => {
    const pocket = (env: Record<string, string>, flags?: Record<string, string>) =>
      pocketV1Settings(
        loadConfig({ env: { ...base, ...env }, ...(flags ? { flags } : {}), ...noFiles })
          .chainSettings,
      );
    expect(pocket({ CM_POCKET_V1_RELAY_CHAINS: '0001,0021' }).relayChains).toEqual([
      '0001',
      '0021',
    ]);
    expect(pocket({ CM_STAKE_CHAINS: '0021' }).relayChains).toEqual(['0021']);
    expect(pocket({ CM_CHAIN_PROFILE: 'v1' }).profile).toBe('v1');
    expect(pocket({}, { 'tx-mode': 'cli', 'cli-path': '/p1' })).toMatchObject({
      txMode: 'cli',
      cliPath: '/p1',
    });
    // The same value under both names is fine; different values are refused, naming both.
    expect(pocket({ CM_TX_MODE: 'rpc', CM_POCKET_V1_TX_MODE: 'rpc' }).txMode).toBe('rpc');
    expect(problems({ ...base, CM_TX_MODE: 'cli', CM_POCKET_V1_TX_MODE: 'rpc' })).toEqual([
      'CM_POCKET_V1_TX_MODE and CM_TX_MODE (its alias) are both set, to different values; set one',
    ]);
    // An older name is read, and named as deprecated with the name that replaces it.
    const renamed = (env: Record<string, string>, flags?: Record<string, string>) =>
      loadConfig({ env: { ...base, ...env }, ...(flags ? { flags } : {}), ...noFiles })
        .deprecations;
    expect(renamed({ CM_POCKET_V1_TX_MODE: 'rpc' })).toEqual([]);
    expect(renamed({ CM_STAKE_CHAINS: '0021' }, { 'chain-profile': 'v1' })).toEqual([
      '--chain-profile is deprecated: it is read as --pocket-v1-profile, the name to use',
      'CM_STAKE_CHAINS is deprecated: it is read as CM_POCKET_V1_RELAY_CHAINS, the name to use',
    ]);
    // A flag still wins over the environment, under either name.
    expect(pocket({ CM_POCKET_V1_PROFILE: 'intended' }, { 'chain-profile': 'v1' }).profile).toBe(
      'v1',
    );
  });

  it("reads a stake amount bare or in the chain's unit, and refuses another unit", () => {
    const amount = (text: string) =>
      pocketV1Settings(
        loadConfig({ env: { ...base, CM_POCKET_V1_STAKE_AMOUNT: text }, ...noFiles }).chainSettings,
      ).stakeAmount;
    expect(amount('150000000001upokt')).toBe('150000000001');
    expect(amount('150000000001')).toBe('150000000001');
    expect(problems({ ...base, CM_POCKET_V1_STAKE_AMOUNT: '150000pokt' })).toEqual([
      'CM_POCKET_V1_STAKE_AMOUNT: expected a positive whole amount of upokt (e.g. 150000000001 or 150000000001upokt), got "150000pokt"',
    ]);
    expect(problems({ ...base, CM_STAKE_AMOUNT: '0upokt' })).toHaveLength(1);
  });

  it("reads only the selected chain's settings, and refuses another chain's namespace", () => {
    const unregister = registerChain(unitChain);
    try {
      expect(knownChains().map((c) => c.name)).toEqual(['pocket-v1', 'unit-chain']);
      const config = loadConfig({
        env: { ...base, CM_CHAIN: 'unit-chain', CM_UNIT_CHAIN_LEVEL: 'high', CM_TX_MODE: 'cli' },
        ...noFiles,
      });
      // Pocket's older names are not read at all for another chain (CM_TX_MODE=cli needs no path).
      expect(config.chainSettings).toEqual({ level: 'high' });
      expect(problems({ ...base, CM_CHAIN: 'unit-chain', CM_POCKET_V1_TX_MODE: 'cli' })).toEqual([
        'CM_POCKET_V1_TX_MODE: a setting of chain pocket-v1, but CM_CHAIN is unit-chain',
      ]);
      expect(problems({ ...base, CM_UNIT_CHAIN_LEVEL: 'high' })).toEqual([
        'CM_UNIT_CHAIN_LEVEL: a setting of chain unit-chain, but CM_CHAIN is pocket-v1',
      ]);
      expect(problems({ ...base, CM_CHAIN: 'nope' })).toEqual([
        'CM_CHAIN: unknown chain "nope"; known chains: pocket-v1, unit-chain',
      ]);
      expect(() => registerChain(unitChain)).toThrow(/already registered/);
    } finally {
      unregister();
    }
    expect(knownChains().map((c) => c.name)).toEqual(['pocket-v1']);
  });

  it("bounds CM_MIN_VALIDATORS by the selected chain's ids, not by a number of its own", () => {
    expect(loadConfig({ env: { ...base, CM_MIN_VALIDATORS: '999' }, ...noFiles })).toMatchObject({
      minValidators: 999,
    });
    expect(problems({ ...base, CM_MIN_VALIDATORS: '1000' })).toEqual([
      'CM_MIN_VALIDATORS: at most 999 (chain pocket-v1 has ids 1 to 999), got 1000',
    ]);
    const unregister = registerChain(unitChain);
    try {
      const unit = { ...base, CM_CHAIN: 'unit-chain' };
      expect(loadConfig({ env: { ...unit, CM_MIN_VALIDATORS: '20' }, ...noFiles })).toMatchObject({
        minValidators: 20,
      });
      expect(problems({ ...unit, CM_MIN_VALIDATORS: '21' })).toEqual([
        'CM_MIN_VALIDATORS: at most 20 (chain unit-chain has ids 1 to 20), got 21',
      ]);
    } finally {
      unregister();
    }
  });

  it('keeps each chain to its own namespace and its own older names', () => {
    const setting = (env: string, flag: string, alias?: { env: string; flag: string }) =>
      text({ env, flag, description: 'x', ...(alias === undefined ? {} : { alias }) });
    const declare = (name: string, settings: Record<string, ReturnType<typeof setting>>) =>
      defineChain({
        name,
        summary: '',
        settings,
        ids: unitChain.ids,
        errors: {},
        port: (rpcUrl, values) => unitChain.port(rpcUrl, values),
      });
    expect(() => declare('other', { mode: setting('CM_TX_MODE', 'other-mode') })).toThrow(
      /not named CM_OTHER_/,
    );
    expect(() => declare('other', { mode: setting('CM_OTHER_MODE', 'mode') })).toThrow(/--other-/);
    expect(() => declare('Other', {})).toThrow(/lowercase/);
    const thief = declare('other', {
      mode: setting('CM_OTHER_MODE', 'other-mode', { env: 'CM_TX_MODE', flag: 'tx-mode' }),
    });
    expect(() => registerChain(thief)).toThrow(/CM_TX_MODE is another chain's setting/);
    expect(knownChains().map((c) => c.name)).toEqual(['pocket-v1']);
  });
});

import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { firstSchemaError } from '../../src/manager/config-check.ts';
import { pocketV1 } from '../../src/manager/chain/pocket/definition.ts';
import { BUILT_IN_CHAINS } from '../../src/manager/chain/registry.ts';
import { ConfigSchema, loadConfig } from '../../src/manager/config.ts';

const config = loadConfig({
  env: { CM_CHAIN_RPC_URL: 'http://127.0.0.1:50832/', CM_MIN_VALIDATORS: '3', CM_CLI_PATH: '/p' },
  readFile: () => undefined,
});

/** Values of every JSON type and edge: each replaces each setting in turn. */
const ODD: unknown[] = [
  undefined,
  null,
  '',
  'x',
  'auto',
  'rpc',
  0,
  -1,
  1.5,
  999,
  1000,
  65_536,
  Number.NaN,
  true,
  [],
  ['a'],
  [1],
  {},
  /x/,
];

describe('firstSchemaError (the configuration check without typebox/value)', () => {
  it('agrees with TypeBox Value.Check on every setting replaced by every odd value', () => {
    expect(firstSchemaError(ConfigSchema, config)).toBeUndefined();
    expect(Value.Check(ConfigSchema, config)).toBe(true);
    let refused = 0;
    for (const key of Object.keys(ConfigSchema.properties))
      for (const odd of [...ODD, (config as Record<string, unknown>)[key]]) {
        const candidate = { ...config, [key]: odd };
        const ours = firstSchemaError(ConfigSchema, candidate) === undefined;
        expect({ key, odd, ok: ours }).toEqual({
          key,
          odd,
          ok: Value.Check(ConfigSchema, candidate),
        });
        if (!ours) refused++;
      }
    expect(refused).toBeGreaterThan(500);
    const { chainRpcUrl: _, ...missing } = config;
    expect(firstSchemaError(ConfigSchema, missing)).toEqual({
      instancePath: '',
      message: 'must have required properties chainRpcUrl',
    });
    expect(Value.Check(ConfigSchema, missing)).toBe(false);
  });

  it("gives Value.Check's verdict on every odd value of each built-in chain's settings", () => {
    for (const chain of BUILT_IN_CHAINS) {
      const values = chain.name === config.chain ? config.chainSettings : {};
      for (const key of Object.keys(chain.schema.properties))
        for (const odd of [...ODD, values[key]]) {
          const candidate = { ...values, [key]: odd };
          expect({ key, odd, ok: firstSchemaError(chain.schema, candidate) === undefined }).toEqual(
            {
              key,
              odd,
              ok: Value.Check(chain.schema, candidate),
            },
          );
        }
    }
  });

  it("words its first error as TypeBox's Value.Errors does", () => {
    const check = (patch: Record<string, unknown>) => {
      const candidate = { ...config, ...patch };
      const ours = firstSchemaError(ConfigSchema, candidate);
      const theirs = Value.Errors(ConfigSchema, candidate).map((e) => [e.instancePath, e.message]);
      expect(theirs).toContainEqual([ours?.instancePath, ours?.message]);
      return ours;
    };
    expect(check({ concurrency: 0 })).toEqual({
      instancePath: '/concurrency',
      message: 'must be >= 1',
    });
    expect(check({ rpcPort: 70_000 })?.message).toBe('must be <= 65535');
    expect(check({ concurrency: 1.5 })?.message).toBe('must be integer');
    expect(check({ pacing: 'grpc' })?.message).toBe('must match a schema in anyOf');
    // A chain's own settings are checked against its schema the same way.
    const chain = { ...config.chainSettings, relayChains: ['a', 2] };
    expect(firstSchemaError(pocketV1.schema, chain)).toEqual({
      instancePath: '/relayChains/1',
      message: 'must be string',
    });
    expect(
      Value.Errors(pocketV1.schema, chain).map((e) => [e.instancePath, e.message]),
    ).toContainEqual(['/relayChains/1', 'must be string']);
    expect(firstSchemaError(pocketV1.schema, config.chainSettings)).toBeUndefined();
  });

  it('throws on a keyword it does not read, so a schema cannot outgrow it unnoticed', () => {
    expect(() => firstSchemaError(Type.String({ pattern: '^a' }), 'a')).toThrow(/"pattern"/);
    expect(() => firstSchemaError(Type.Number(), 1)).toThrow(/"number"/);
  });
});

// Genesis: V1's JSON shape from a keys Secret, service URL templates, parsing and validation.
import { describe, expect, it } from 'vitest';
import { generateKeys } from '../../src/pocket/index.ts';
import {
  buildGenesis,
  expandServiceUrl,
  GenesisError,
  genesisHash,
  parseGenesis,
} from '../../src/localnet/genesis.ts';
import { readKeysSecret, SecretKeysError } from '../../src/localnet/secret-keys.ts';
import { poolAddress } from '../../src/localnet/pools.ts';

const keys = generateKeys({ count: 5, seed: 'genesis-test' });

function secretYaml(entries: [string, string][], field: 'stringData' | 'data' = 'stringData') {
  const lines = entries.map(([id, value]) => `  "${id}": "${value}"`);
  return `apiVersion: v1\nkind: Secret\nmetadata:\n  name: validators-private-keys\ntype: Opaque\n${field}:\n${lines.join('\n')}\n`;
}

describe('buildGenesis', () => {
  const genesis = buildGenesis({
    keys,
    validators: 3,
    serviceUrl: 'node-{id}-{index}-{ordinal}:42069',
    genesisTime: new Date(1_700_000_000_123),
  });

  it('funds every key and stakes the first N ids with V1 defaults', () => {
    expect(genesis.accounts.map((a) => a.address)).toEqual(
      [...keys.values()].map((k) => k.address),
    );
    expect(genesis.accounts.every((a) => a.amount === '100000000000000')).toBe(true);
    expect(genesis.validators.map((v) => v.address)).toEqual(
      ['001', '002', '003'].map((id) => keys.get(id)!.address),
    );
    expect(genesis.validators[0]).toEqual({
      address: keys.get('001')!.address,
      public_key: keys.get('001')!.publicKeyHex,
      chains: null,
      service_url: 'node-001-1-0:42069',
      staked_amount: '1000000000000',
      paused_height: -1,
      unstaking_height: -1,
      output: keys.get('001')!.address,
      actor_type: 4,
    });
    expect(genesis.validators[2]!.service_url).toBe('node-003-3-2:42069');
  });

  it("carries V1's parameters, pools, chain id and time", () => {
    expect(genesis.params.validator_minimum_stake).toBe('15000000000');
    expect(genesis.params.validator_unstaking_blocks).toBe(2016);
    expect(genesis.params.message_stake_validator_fee).toBe('10000');
    expect(genesis.params.validator_max_paused_blocks_owner).toBe(
      'da034209758b78eaea06dd99c07909ab54c99b45',
    );
    expect(genesis.pools.map((p) => p.address)).toContain(
      '44414f0000000000000000000000000000000000',
    );
    const stakePool = genesis.pools.find((p) => p.address === poolAddress('ValidatorStakePool'));
    expect(stakePool?.amount).toBe('3000000000000');
    expect(genesis.chain_id).toBe('testnet');
    expect(genesis.genesis_time).toEqual({ seconds: 1_700_000_000, nanos: 123_000_000 });
  });

  it('takes a configurable unstaking period and a service URL function', () => {
    const custom = buildGenesis({
      keys,
      validators: 2,
      unstakingBlocks: 3,
      serviceUrl: (slot) => `127.0.0.1:${42000 + slot.ordinal}`,
    });
    expect(custom.params.validator_unstaking_blocks).toBe(3);
    expect(custom.validators.map((v) => v.service_url)).toEqual([
      '127.0.0.1:42000',
      '127.0.0.1:42001',
    ]);
  });

  it('refuses to stake more validators than there are keys', () => {
    expect(() => buildGenesis({ keys, validators: 6 })).toThrow(RangeError);
  });

  it('round-trips through JSON and parseGenesis with the same hash', () => {
    const parsed = parseGenesis(JSON.parse(JSON.stringify(genesis)));
    expect(parsed).toEqual(genesis);
    expect(genesisHash(parsed)).toBe(genesisHash(genesis));
  });
});

describe('expandServiceUrl', () => {
  it('replaces every placeholder occurrence', () => {
    expect(
      expandServiceUrl('{id}.{id}:{index}/{ordinal}', {
        id: '007',
        index: 7,
        ordinal: 6,
        address: '',
      }),
    ).toBe('007.007:7/6');
  });
});

describe('parseGenesis', () => {
  it('lists every problem at once', () => {
    const error = (() => {
      try {
        parseGenesis({ accounts: [{ address: 'xyz', amount: '1' }], validators: [{}] });
      } catch (caught) {
        return caught as GenesisError;
      }
      throw new Error('expected an error');
    })();
    expect(error).toBeInstanceOf(GenesisError);
    expect(error.problems).toEqual(
      expect.arrayContaining([
        'accounts[0].address must be 40 lowercase hex characters',
        'validators[0].address must be 40 lowercase hex characters',
        'validators[0].public_key must be 64 lowercase hex characters',
        'genesis has no validators',
      ]),
    );
  });
});

describe('readKeysSecret', () => {
  const entries = [...keys].map(([id, key]) => [id, key.exportPrivateKeyHex()] as [string, string]);

  it('reads stringData and base64 data, sorted by id', () => {
    const fromString = readKeysSecret(secretYaml(entries.reverse()));
    expect([...fromString.keys()]).toEqual(['001', '002', '003', '004', '005']);
    const encoded = entries.map(
      ([id, hex]) => [id, Buffer.from(hex).toString('base64')] as [string, string],
    );
    const fromData = readKeysSecret(secretYaml(encoded, 'data'));
    expect(fromData.get('003')?.address).toBe(keys.get('003')!.address);
  });

  it('names the id of a bad key without printing the key', () => {
    const bad = `${keys.get('001')!.exportPrivateKeyHex().slice(0, 127)}z`;
    expect(() => readKeysSecret(secretYaml([['001', bad]]))).toThrow(SecretKeysError);
    try {
      readKeysSecret(secretYaml([['001', bad]]));
    } catch (error) {
      expect((error as Error).message).toMatch(/^key 001: /);
      expect((error as Error).message).not.toContain(bad.slice(0, 32));
    }
  });

  it('rejects a manifest without a Secret', () => {
    expect(() => readKeysSecret('kind: ConfigMap\n')).toThrow('no Secret found');
  });
});

// Genesis in V1's JSON shape (the `v1-localnet-genesis` ConfigMap): build one from keys, parse
// and validate one from a file, and hash it (the chain's identity in signatures and vote guards).
import { createHash } from 'node:crypto';
import { formatValidatorId, type ValidatorKey } from '../pocket/index.ts';
import { ACTOR_KINDS, actorTypeInfo, ActorKind, isActorKind } from './actor-types.ts';
import { defaultParams } from './params.ts';
import { POOL_NAMES, poolAddress, PoolName } from './pools.ts';

export interface GenesisAccount {
  address: string;
  amount: string;
}

/** An actor row as a V1 genesis holds it (`output`, numeric `actor_type`). */
export interface GenesisActor {
  address: string;
  public_key: string;
  chains: string[] | null;
  service_url?: string;
  staked_amount: string;
  paused_height: number;
  unstaking_height: number;
  output: string;
  actor_type: number;
}

export interface Genesis {
  accounts: GenesisAccount[];
  pools: GenesisAccount[];
  validators: GenesisActor[];
  applications: GenesisActor[];
  servicers: GenesisActor[];
  fishermen: GenesisActor[];
  params: Record<string, string | number>;
  genesis_time: { seconds: number; nanos: number };
  chain_id: string;
  max_block_bytes: number;
}

/** Where a genesis validator sits in the key list, for service URL templates. */
export interface ValidatorSlot {
  /** Secret id, "001". */
  id: string;
  /** 1-based position among the keys. */
  index: number;
  /** 0-based position (a StatefulSet ordinal). */
  ordinal: number;
  address: string;
}

export interface BuildGenesisOptions {
  /** Every key here gets an account; ids in ascending order decide who is staked. */
  keys: ReadonlyMap<string, ValidatorKey>;
  /** How many of the first keys are staked validators at genesis. */
  validators: number;
  /**
   * Each genesis validator's `service_url` (host:port of its p2p server, no scheme): a template
   * with `{id}`, `{index}` and `{ordinal}`, or a function. Default `validator-{id}-pocket:42069`.
   */
  serviceUrl?: string | ((slot: ValidatorSlot) => string);
  /** `validator_unstaking_blocks` (V1: 2016). */
  unstakingBlocks?: number;
  /** Stake of each genesis validator in uPOKT (V1: 1000000000000). */
  stakeAmount?: string;
  /** Balance of each account in uPOKT (V1: 100000000000000). */
  accountAmount?: string;
  chainId?: string;
  /** Genesis time; default now, which makes every new genesis (and so its chain) distinct. */
  genesisTime?: Date;
  /** Parameter overrides on top of V1's defaults. */
  params?: Readonly<Record<string, string | number>>;
}

export const DEFAULT_SERVICE_URL_TEMPLATE = 'validator-{id}-pocket:42069';
const DEFAULT_STAKE = '1000000000000';
const DEFAULT_BALANCE = '100000000000000';

/** Expands `{id}`, `{index}` and `{ordinal}` in a service URL template. */
export function expandServiceUrl(template: string, slot: ValidatorSlot): string {
  return template
    .replaceAll('{id}', slot.id)
    .replaceAll('{index}', String(slot.index))
    .replaceAll('{ordinal}', String(slot.ordinal));
}

/**
 * A V1-shaped genesis: every key funded, the first `validators` keys (by id) staked with
 * `service_url`s from the template, V1's parameters and pools. The validator stake pool holds
 * exactly the genesis stakes, so stakes and pools add up.
 */
export function buildGenesis(options: BuildGenesisOptions): Genesis {
  const entries = [...options.keys].sort(([a], [b]) => (a < b ? -1 : 1));
  if (!Number.isInteger(options.validators) || options.validators < 0) {
    throw new RangeError(`validators must be a whole number ≥ 0 (got ${options.validators})`);
  }
  if (options.validators > entries.length) {
    throw new RangeError(
      `cannot stake ${options.validators} validators with ${entries.length} keys`,
    );
  }
  const stake = options.stakeAmount ?? DEFAULT_STAKE;
  const balance = options.accountAmount ?? DEFAULT_BALANCE;
  const serviceUrl = options.serviceUrl ?? DEFAULT_SERVICE_URL_TEMPLATE;
  const staked = entries.slice(0, options.validators);
  const validators = staked.map(([id, key], ordinal): GenesisActor => {
    const slot = { id, index: ordinal + 1, ordinal, address: key.address };
    return {
      address: key.address,
      public_key: key.publicKeyHex,
      chains: null,
      service_url:
        typeof serviceUrl === 'string' ? expandServiceUrl(serviceUrl, slot) : serviceUrl(slot),
      staked_amount: stake,
      paused_height: -1,
      unstaking_height: -1,
      output: key.address,
      actor_type: ActorKind.validator,
    };
  });
  const stakedTotal = BigInt(stake) * BigInt(validators.length);
  const poolAmounts: Record<PoolName, string> = {
    DAO: DEFAULT_BALANCE,
    FeeCollector: '0',
    AppStakePool: '0',
    ValidatorStakePool: stakedTotal.toString(),
    ServicerStakePool: '0',
    FishermanStakePool: '0',
  };
  const params = { ...defaultParams(), ...options.params };
  if (options.unstakingBlocks !== undefined) {
    params.validator_unstaking_blocks = options.unstakingBlocks;
  }
  const time = options.genesisTime ?? new Date();
  return {
    accounts: entries.map(([, key]) => ({ address: key.address, amount: balance })),
    pools: POOL_NAMES.map((name) => ({ address: poolAddress(name), amount: poolAmounts[name] })),
    validators,
    applications: [],
    servicers: [],
    fishermen: [],
    params,
    genesis_time: {
      seconds: Math.floor(time.getTime() / 1000),
      nanos: (time.getTime() % 1000) * 1_000_000,
    },
    chain_id: options.chainId ?? 'testnet',
    max_block_bytes: 4_000_000,
  };
}

/** Why a genesis file was rejected; lists every problem found. */
export class GenesisError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid genesis: ${problems.join('; ')}`);
    this.name = 'GenesisError';
    this.problems = problems;
  }
}

const HEX40 = /^[0-9a-f]{40}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const AMOUNT = /^\d+$/;

/**
 * Validates a parsed genesis JSON (V1 shape). Addresses and keys must be lowercase hex, amounts
 * decimal strings; missing actor lists count as empty; missing params take V1's defaults.
 * Throws `GenesisError` with every problem found.
 */
export function parseGenesis(json: unknown): Genesis {
  const problems: string[] = [];
  if (typeof json !== 'object' || json === null) throw new GenesisError(['not a JSON object']);
  const raw = json as Record<string, unknown>;
  const accounts = parseAccounts(raw.accounts, 'accounts', problems);
  const pools = parseAccounts(raw.pools, 'pools', problems);
  const actors = Object.fromEntries(
    ACTOR_KINDS.map((kind) => {
      const key = actorTypeInfo(kind).genesisKey;
      return [key, parseActors(raw[key], { key, kind, problems })];
    }),
  ) as Record<'validators' | 'applications' | 'servicers' | 'fishermen', GenesisActor[]>;
  const params = { ...defaultParams() };
  if (raw.params !== undefined) {
    if (typeof raw.params !== 'object' || raw.params === null) {
      problems.push('params must be an object');
    } else {
      for (const [name, value] of Object.entries(raw.params)) {
        if (typeof value === 'string' || typeof value === 'number') params[name] = value;
        else problems.push(`params.${name} must be a string or a number`);
      }
    }
  }
  const time = raw.genesis_time as { seconds?: unknown; nanos?: unknown } | undefined;
  const chainId = raw.chain_id ?? 'testnet';
  if (typeof chainId !== 'string' || chainId === '') problems.push('chain_id must be a string');
  const maxBlockBytes = raw.max_block_bytes ?? 4_000_000;
  if (typeof maxBlockBytes !== 'number' || maxBlockBytes <= 0) {
    problems.push('max_block_bytes must be a positive number');
  }
  if (actors.validators.length === 0) problems.push('genesis has no validators');
  if (problems.length > 0) throw new GenesisError(problems);
  return {
    accounts,
    pools,
    ...actors,
    params,
    genesis_time: {
      seconds: typeof time?.seconds === 'number' ? time.seconds : 0,
      nanos: typeof time?.nanos === 'number' ? time.nanos : 0,
    },
    chain_id: chainId as string,
    max_block_bytes: maxBlockBytes as number,
  };
}

function parseAccounts(value: unknown, where: string, problems: string[]): GenesisAccount[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.push(`${where} must be an array`);
    return [];
  }
  return value.flatMap((item: unknown, i): GenesisAccount[] => {
    const entry = item as Partial<GenesisAccount> | null;
    if (typeof entry?.address !== 'string' || !HEX40.test(entry.address)) {
      problems.push(`${where}[${i}].address must be 40 lowercase hex characters`);
      return [];
    }
    if (typeof entry.amount !== 'string' || !AMOUNT.test(entry.amount)) {
      problems.push(`${where}[${i}].amount must be a decimal string`);
      return [];
    }
    return [{ address: entry.address, amount: entry.amount }];
  });
}

function parseActors(
  value: unknown,
  context: { key: string; kind: ActorKind; problems: string[] },
): GenesisActor[] {
  const { key, kind, problems } = context;
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.push(`${key} must be an array`);
    return [];
  }
  return value.flatMap((item: unknown, i): GenesisActor[] => {
    const at = `${key}[${i}]`;
    if (typeof item !== 'object' || item === null) {
      problems.push(`${at} must be an object`);
      return [];
    }
    const a = item as Partial<Record<keyof GenesisActor, unknown>>;
    const { address, public_key: publicKey, staked_amount: staked } = a;
    const output = a.output ?? address;
    const actorType = a.actor_type ?? kind;
    const before = problems.length;
    if (typeof address !== 'string' || !HEX40.test(address)) {
      problems.push(`${at}.address must be 40 lowercase hex characters`);
    }
    if (typeof publicKey !== 'string' || !HEX64.test(publicKey)) {
      problems.push(`${at}.public_key must be 64 lowercase hex characters`);
    }
    if (typeof staked !== 'string' || !AMOUNT.test(staked)) {
      problems.push(`${at}.staked_amount must be a decimal string`);
    }
    if (typeof output !== 'string' || !HEX40.test(output)) {
      problems.push(`${at}.output must be 40 lowercase hex characters`);
    }
    if (typeof actorType !== 'number' || !isActorKind(actorType) || actorType !== kind) {
      problems.push(`${at}.actor_type must be ${kind}`);
    }
    if (
      problems.length > before ||
      typeof address !== 'string' ||
      typeof publicKey !== 'string' ||
      typeof staked !== 'string' ||
      typeof output !== 'string'
    ) {
      return [];
    }
    return [
      {
        address,
        public_key: publicKey,
        chains: Array.isArray(a.chains) ? a.chains.map(String) : null,
        service_url: typeof a.service_url === 'string' ? a.service_url : '',
        staked_amount: staked,
        paused_height: typeof a.paused_height === 'number' ? a.paused_height : -1,
        unstaking_height: typeof a.unstaking_height === 'number' ? a.unstaking_height : -1,
        output,
        actor_type: kind,
      },
    ];
  });
}

/**
 * Hex SHA-256 of the genesis as canonical JSON (keys sorted at every level): the chain's
 * identity, bound into every vote; independent of how a file orders its keys.
 */
export function genesisHash(genesis: Genesis): string {
  return createHash('sha256').update(canonicalJson(genesis)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The id ("001") of a 1-based index, re-exported for template users. */
export { formatValidatorId };

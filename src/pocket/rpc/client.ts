// Typed client of the Pocket V1 RPC: one method per endpoint, timeouts and abort signals on every
// call, V1's text errors turned into `RpcError`s with their code. Requests go through node:http(s)
// with the global keep-alive agents: about a third of fetch's CPU per call (undici's WHATWG
// streams and headers), which a manager broadcasting a burst of transactions feels.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { PocketError, PocketErrorCode } from '../errors.ts';
import { httpError, RpcError } from './errors.ts';
import type {
  Account,
  AddressBook,
  Block,
  ConsensusState,
  IndexedTransaction,
  Parameter,
  ProtocolActor,
  RpcActorType,
  TransactionsPage,
  ValidatorsPage,
} from './types.ts';

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Overrides the client's default timeout for this call. */
  timeoutMs?: number | undefined;
}

export interface PocketRpcClientOptions {
  /** Base URL of a node's RPC, e.g. `http://127.0.0.1:50832`. */
  baseUrl: string;
  /** Default per-call timeout (10 s). */
  timeoutMs?: number;
}

/** V1's per_page ceiling. */
const MAX_PER_PAGE = 1000;
/** V1 answers an unknown validator with this 500 body. */
const NO_ROWS = 'no rows in result set';
/** V1 answers an unknown transaction hash with badger's 500 body. */
const KEY_NOT_FOUND = 'Key not found';

type Method = 'GET' | 'POST' | 'HEAD';

/**
 * A client of one node's RPC. Heights follow V1: `height: 0` (the default) means the latest
 * committed height. Methods that look an item up return `undefined` when V1 says it does not
 * exist, and throw `RpcError` for every other failure.
 */
export class PocketRpcClient {
  readonly baseUrl: string;
  readonly #timeoutMs: number;

  constructor(options: PocketRpcClientOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new PocketError(
        PocketErrorCode.invalidArgument,
        `RPC URL is not a URL: ${JSON.stringify(options.baseUrl)}`,
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new PocketError(
        PocketErrorCode.invalidArgument,
        `RPC URL must be http(s): ${url.href}`,
      );
    }
    this.baseUrl = url.href.replace(/\/+$/, '');
    this.#timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** True when `GET /v1/health` answers 200; false for any other answer or transport failure. */
  async isHealthy(options?: CallOptions): Promise<boolean> {
    try {
      await this.#request('GET', '/v1/health', undefined, options);
      return true;
    } catch (error: unknown) {
      if (error instanceof RpcError && error.code !== PocketErrorCode.rpcAborted) return false;
      throw error;
    }
  }

  /** `GET /v1/version` (text). */
  async version(options?: CallOptions): Promise<string> {
    return this.#request('GET', '/v1/version', undefined, options);
  }

  /** `GET /v1/consensus/state`: the live height (last committed + 1), round and step. */
  async consensusState(options?: CallOptions): Promise<ConsensusState> {
    return this.#json<ConsensusState>('GET', '/v1/consensus/state', undefined, options);
  }

  /** `GET /v1/query/height`: the last committed height. */
  async height(options?: CallOptions): Promise<number> {
    const body = await this.#json<{ height: number }>(
      'GET',
      '/v1/query/height',
      undefined,
      options,
    );
    return body.height;
  }

  /** `POST /v1/query/validator`; `undefined` when the address was never staked. */
  async validator(
    address: string,
    options?: CallOptions & { height?: number },
  ): Promise<ProtocolActor | undefined> {
    try {
      return await this.#json<ProtocolActor>(
        'POST',
        '/v1/query/validator',
        { address, height: options?.height ?? 0 },
        options,
      );
    } catch (error: unknown) {
      if (isHttpBody(error, 500, NO_ROWS)) return undefined;
      throw error;
    }
  }

  /** One page of `POST /v1/query/validators`. */
  async validatorsPage(
    query: { page: number; perPage: number; height?: number },
    options?: CallOptions,
  ): Promise<ValidatorsPage> {
    return this.#json<ValidatorsPage>(
      'POST',
      '/v1/query/validators',
      { height: query.height ?? 0, page: query.page, per_page: query.perPage },
      options,
    );
  }

  /**
   * Every validator row at a height (staked, unstaking and unstaked alike), across all pages,
   * pinned to one height so pages agree with each other.
   */
  async validators(options?: CallOptions & { height?: number }): Promise<ProtocolActor[]> {
    const height = options?.height ?? (await this.height(options));
    const all: ProtocolActor[] = [];
    for (let page = 1; ; page++) {
      const result = await this.validatorsPage({ page, perPage: MAX_PER_PAGE, height }, options);
      all.push(...(result.validators ?? []));
      if (page >= result.total_pages) return all;
    }
  }

  /** `POST /v1/query/account`; V1 reports unknown accounts with amount "0". */
  async account(address: string, options?: CallOptions & { height?: number }): Promise<Account> {
    return this.#json<Account>(
      'POST',
      '/v1/query/account',
      { address, height: options?.height ?? 0 },
      options,
    );
  }

  /** `POST /v1/query/balance`. */
  async balance(address: string, options?: CallOptions & { height?: number }): Promise<number> {
    const body = await this.#json<{ balance: number }>(
      'POST',
      '/v1/query/balance',
      { address, height: options?.height ?? 0 },
      options,
    );
    return body.balance;
  }

  /** `POST /v1/query/tx`; `undefined` when the hash is not in the index (pending or dropped). */
  async transaction(hash: string, options?: CallOptions): Promise<IndexedTransaction | undefined> {
    try {
      return await this.#json<IndexedTransaction>('POST', '/v1/query/tx', { hash }, options);
    } catch (error: unknown) {
      if (isHttpBody(error, 500, KEY_NOT_FOUND)) return undefined;
      throw error;
    }
  }

  /** `POST /v1/query/unconfirmed_tx`; `undefined` when the hash is not in the mempool. */
  async unconfirmedTransaction(
    hash: string,
    options?: CallOptions,
  ): Promise<IndexedTransaction | undefined> {
    try {
      return await this.#json<IndexedTransaction>(
        'POST',
        '/v1/query/unconfirmed_tx',
        { hash },
        options,
      );
    } catch (error: unknown) {
      if (
        error instanceof RpcError &&
        error.status === 400 &&
        error.body?.startsWith('hash not found in mempool')
      ) {
        return undefined;
      }
      throw error;
    }
  }

  /** Every transaction in the mempool, across all pages. */
  async unconfirmedTransactions(options?: CallOptions): Promise<IndexedTransaction[]> {
    const all: IndexedTransaction[] = [];
    for (let page = 1; ; page++) {
      const result = await this.#json<TransactionsPage>(
        'POST',
        '/v1/query/unconfirmed_txs',
        { page, per_page: MAX_PER_PAGE },
        options,
      );
      all.push(...(result.transactions ?? []));
      if (page >= result.total_pages) return all;
    }
  }

  /** `POST /v1/query/block` at a height (0 = latest committed). */
  async block(height = 0, options?: CallOptions): Promise<Block> {
    const body = await this.#json<{ block: Block }>('POST', '/v1/query/block', { height }, options);
    return body.block;
  }

  /** `POST /v1/query/param`. */
  async param(name: string, options?: CallOptions & { height?: number }): Promise<string> {
    const body = await this.#json<Parameter>(
      'POST',
      '/v1/query/param',
      { param_name: name, height: options?.height ?? 0 },
      options,
    );
    return body.parameter_value;
  }

  /** `GET /v1/query/all_chain_params`. */
  async allParams(options?: CallOptions): Promise<Parameter[]> {
    return this.#json<Parameter[]>('GET', '/v1/query/all_chain_params', undefined, options);
  }

  /** `GET /v1/p2p/staked_actors_address_book`. */
  async addressBook(
    query: { actorType: RpcActorType; height?: number },
    options?: CallOptions,
  ): Promise<AddressBook> {
    const params = new URLSearchParams({ actor_type: query.actorType });
    if (query.height !== undefined) params.set('height', String(query.height));
    return this.#json<AddressBook>(
      'GET',
      `/v1/p2p/staked_actors_address_book?${params.toString()}`,
      undefined,
      options,
    );
  }

  /**
   * `POST /v1/client/broadcast_tx_sync`. Resolves when the node admitted the transaction into its
   * mempool (which does not mean it will be applied); throws `RpcError` with `v1Code` otherwise.
   */
  async broadcast(tx: { hex: string; signer: string }, options?: CallOptions): Promise<void> {
    await this.#request(
      'POST',
      '/v1/client/broadcast_tx_sync',
      { address: tx.signer, raw_hex_bytes: tx.hex },
      options,
    );
  }

  /** POSTs to a localnet debug endpoint (`/v1/debug/<action>`); not part of V1's RPC. */
  async debug(
    action: 'trigger_view' | 'toggle_pacemaker_mode' | 'reset_to_genesis',
    options?: CallOptions,
  ): Promise<string> {
    return this.#request('POST', `/v1/debug/${action}`, {}, options);
  }

  async #json<T>(
    method: Method,
    path: string,
    body: unknown,
    options: CallOptions | undefined,
  ): Promise<T> {
    const text = await this.#request(method, path, body, options);
    try {
      return JSON.parse(text) as T;
    } catch (error: unknown) {
      throw new RpcError(
        PocketErrorCode.rpcBadResponse,
        `${this.baseUrl}${path} answered 200 with a body that is not JSON`,
        {
          url: this.baseUrl + path,
          body: text,
          cause: error,
        },
      );
    }
  }

  async #request(
    method: Method,
    path: string,
    body: unknown,
    options: CallOptions | undefined,
  ): Promise<string> {
    const url = this.baseUrl + path;
    const timeoutMs = options?.timeoutMs ?? this.#timeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options?.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let status: number;
    let text: string;
    try {
      ({ status, text } = await send(url, method, body, signal));
    } catch (error: unknown) {
      throw transportError({
        url,
        method,
        error,
        timedOut: timeout.aborted,
        cancelled: options?.signal?.aborted === true,
        timeoutMs,
      });
    }
    if (status < 200 || status > 299) throw httpError(url, status, text);
    return text;
  }
}

/** One HTTP exchange: the status and the body as text. Rejects on transport failure or abort. */
function send(
  url: string,
  method: Method,
  body: unknown,
  signal: AbortSignal,
): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers =
    payload === undefined
      ? undefined
      : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const onResponse = (response: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('aborted', () => reject(new Error('the response was cut off')));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
    };
    const req = request(url, { method, signal, ...(headers ? { headers } : {}) }, onResponse);
    req.on('error', reject);
    req.end(payload);
  });
}

function transportError(details: {
  url: string;
  method: string;
  error: unknown;
  timedOut: boolean;
  /** The caller's signal aborted. */
  cancelled: boolean;
  timeoutMs: number;
}): RpcError {
  const { url, method, error } = details;
  if (details.timedOut) {
    return new RpcError(
      PocketErrorCode.rpcTimeout,
      `${method} ${url} timed out after ${details.timeoutMs} ms`,
      { url, cause: error },
    );
  }
  if (details.cancelled || (error instanceof Error && error.name === 'AbortError')) {
    return new RpcError(PocketErrorCode.rpcAborted, `${method} ${url} was cancelled`, {
      url,
      cause: error,
    });
  }
  const reason =
    error instanceof Error
      ? error.cause instanceof Error
        ? error.cause.message
        : error.message
      : String(error);
  return new RpcError(PocketErrorCode.rpcUnreachable, `${method} ${url} failed: ${reason}`, {
    url,
    cause: error,
  });
}

function isHttpBody(error: unknown, status: number, bodyStart: string): boolean {
  return (
    error instanceof RpcError && error.status === status && (error.body ?? '').startsWith(bodyStart)
  );
}

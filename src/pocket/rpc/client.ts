// Typed client of the Pocket V1 RPC: one method per endpoint, timeouts and abort signals on every
// call, V1's text errors turned into `RpcError`s with their code. It takes V1 as its Go handlers
// answer (rpc/handlers*.go at 58c9b650), not only as rpc/v1/openapi.yaml describes it: both block
// shapes, `null` lists, and the mempool queries' 500 `CODE: 135` while anything is pending, which
// is an outcome (`mempool()`), not a failure. Every body is size-capped (`DEFAULT_MAX_RESPONSE_BYTES`)
// and every 200 body shape-checked (`shapes.ts`) before a caller sees it. Bytes move through a
// transport port (`transport.ts`; node:http(s) by default).
import { PocketError, PocketErrorCode } from '../errors.ts';
import { V1Code } from '../v1-errors.ts';
import { httpError, RpcError } from './errors.ts';
import * as shapes from './shapes.ts';
import { nodeHttpTransport, type HttpMethod, type HttpTransport } from './transport.ts';
import type {
  Account,
  AddressBook,
  Block,
  ConsensusState,
  IndexedTransaction,
  Parameter,
  ProtocolActor,
  RpcActorType,
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
  /** Largest response body accepted (default `DEFAULT_MAX_RESPONSE_BYTES`, 32 MiB). */
  maxResponseBytes?: number;
  /** How bytes move (default: node:http(s)); tests pass a fake. */
  transport?: HttpTransport;
}

/**
 * What the mempool looks like through V1's RPC: its transactions, or not readable now — V1
 * answers 500 `CODE: 135` whenever the mempool holds anything (rpc/utils.go:364-373 renders
 * each pending transaction through `GetIndexedTransaction`, utility/transaction.go:55-58, which
 * only knows committed ones). A caller then asks for its own transactions by hash.
 */
export type MempoolView =
  { readable: true; transactions: IndexedTransaction[] } | { readable: false; reason: string };

/** One hash in the mempool: absent, or present (its rendering, when V1 can give one). */
export type MempoolEntry =
  { inMempool: false } | { inMempool: true; transaction: IndexedTransaction | undefined };

const MEMPOOL_UNREADABLE =
  'V1 answers CODE 135 to mempool queries while its mempool holds transactions';

/** V1's per_page ceiling. */
const MAX_PER_PAGE = 1000;
/** V1 answers an unknown validator with this 500 body. */
const NO_ROWS = 'no rows in result set';
/** V1 answers an unknown transaction hash with badger's 500 body. */
const KEY_NOT_FOUND = 'Key not found';
/** V1's 400 body for a hash that is not in the mempool (rpc/handlers_query.go:558-561). */
const NOT_IN_MEMPOOL = 'hash not found in mempool';
/**
 * The default cap on a response body: 32 MiB. The largest answer V1 gives is a block, at most
 * 4 MB of transactions, which its JSON rendering (hex and base64 of each, plus the decoded
 * message) makes several times larger; a page of 1000 validator rows is under 0.5 MB. Past the
 * cap the body is a misbehaving or hostile node, and reading on would let it take the manager's
 * memory (its budget is a peak resident set under 200 MiB, ADR 0009): the call fails with
 * `RPC_RESPONSE_TOO_LARGE` instead.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

type Method = HttpMethod;

/**
 * A client of one node's RPC. Heights follow V1: `height: 0` (the default) means the latest
 * committed height. Methods that look an item up return `undefined` when V1 says it does not
 * exist, and throw `RpcError` for every other failure.
 */
export class PocketRpcClient {
  readonly baseUrl: string;
  readonly #timeoutMs: number;
  readonly #maxResponseBytes: number;
  readonly #transport: HttpTransport;

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
    this.#maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.#transport = options.transport ?? nodeHttpTransport;
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
    return this.#json(
      { method: 'GET', path: '/v1/consensus/state', body: undefined },
      options,
      shapes.consensusState,
    );
  }

  /** `GET /v1/query/height`: the last committed height. */
  async height(options?: CallOptions): Promise<number> {
    const body = await this.#json(
      { method: 'GET', path: '/v1/query/height', body: undefined },
      options,
      shapes.heightBody,
    );
    return body.height;
  }

  /** `POST /v1/query/validator`; `undefined` when the address was never staked. */
  async validator(
    address: string,
    options?: CallOptions & { height?: number },
  ): Promise<ProtocolActor | undefined> {
    try {
      return await this.#json(
        {
          method: 'POST',
          path: '/v1/query/validator',
          body: { address, height: options?.height ?? 0 },
        },
        options,
        (value) => shapes.protocolActor(value),
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
    return this.#json(
      {
        method: 'POST',
        path: '/v1/query/validators',
        body: { height: query.height ?? 0, page: query.page, per_page: query.perPage },
      },
      options,
      shapes.validatorsPage,
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
    return this.#json(
      {
        method: 'POST',
        path: '/v1/query/account',
        body: { address, height: options?.height ?? 0 },
      },
      options,
      shapes.account,
    );
  }

  /** `POST /v1/query/balance`. */
  async balance(address: string, options?: CallOptions & { height?: number }): Promise<number> {
    return this.#json(
      {
        method: 'POST',
        path: '/v1/query/balance',
        body: { address, height: options?.height ?? 0 },
      },
      options,
      shapes.balance,
    );
  }

  /** `POST /v1/query/tx`; `undefined` when the hash is not in the index (pending or dropped). */
  async transaction(hash: string, options?: CallOptions): Promise<IndexedTransaction | undefined> {
    try {
      return await this.#json(
        { method: 'POST', path: '/v1/query/tx', body: { hash } },
        options,
        (value) => shapes.indexedTransaction(value),
      );
    } catch (error: unknown) {
      if (isHttpBody(error, 500, KEY_NOT_FOUND)) return undefined;
      throw error;
    }
  }

  /**
   * `POST /v1/query/unconfirmed_tx`: whether `hash` is in the mempool, with its rendering when
   * the node gives one. V1 finds it and then answers 500 `CODE: 135` (it cannot render a pending
   * transaction): that still means "in the mempool".
   */
  async mempoolEntry(hash: string, options?: CallOptions): Promise<MempoolEntry> {
    try {
      const transaction = await this.#json(
        { method: 'POST', path: '/v1/query/unconfirmed_tx', body: { hash } },
        options,
        (value) => shapes.indexedTransaction(value),
      );
      return { inMempool: true, transaction };
    } catch (error: unknown) {
      if (isHttpBody(error, 400, NOT_IN_MEMPOOL)) return { inMempool: false };
      if (isMempoolUnreadable(error)) return { inMempool: true, transaction: undefined };
      throw error;
    }
  }

  /**
   * `POST /v1/query/unconfirmed_tx`; `undefined` when the hash is not in the mempool. Throws
   * `RpcError` `RPC_MEMPOOL_UNREADABLE` on V1's 135; `mempoolEntry` takes that as an answer.
   */
  async unconfirmedTransaction(
    hash: string,
    options?: CallOptions,
  ): Promise<IndexedTransaction | undefined> {
    const entry = await this.mempoolEntry(hash, options);
    if (!entry.inMempool) return undefined;
    if (entry.transaction === undefined) throw this.#mempoolUnreadable('/v1/query/unconfirmed_tx');
    return entry.transaction;
  }

  /**
   * Every transaction in the mempool across all pages, or `readable: false` when the node
   * answers V1's 135 (the normal state of a V1 node while anything is pending).
   */
  async mempool(options?: CallOptions): Promise<MempoolView> {
    const all: IndexedTransaction[] = [];
    for (let page = 1; ; page++) {
      let result;
      try {
        result = await this.#json(
          {
            method: 'POST',
            path: '/v1/query/unconfirmed_txs',
            body: { page, per_page: MAX_PER_PAGE },
          },
          options,
          shapes.transactionsPage,
        );
      } catch (error: unknown) {
        if (isMempoolUnreadable(error)) return { readable: false, reason: MEMPOOL_UNREADABLE };
        throw error;
      }
      all.push(...(result.transactions ?? []));
      if (page >= result.total_pages) return { readable: true, transactions: all };
    }
  }

  /**
   * Every transaction in the mempool, across all pages. Throws `RpcError`
   * `RPC_MEMPOOL_UNREADABLE` where V1 answers 135; `mempool()` returns that as an outcome.
   */
  async unconfirmedTransactions(options?: CallOptions): Promise<IndexedTransaction[]> {
    const view = await this.mempool(options);
    if (!view.readable) throw this.#mempoolUnreadable('/v1/query/unconfirmed_txs');
    return view.transactions;
  }

  /**
   * `POST /v1/query/block` at a height (0 = latest committed). Accepts the block itself (V1's
   * handler) and `{"block": …}` (the openapi file); `null` lists come back empty.
   */
  async block(height = 0, options?: CallOptions): Promise<Block> {
    return this.#json(
      { method: 'POST', path: '/v1/query/block', body: { height } },
      options,
      shapes.block,
    );
  }

  /** `POST /v1/query/param`. */
  async param(name: string, options?: CallOptions & { height?: number }): Promise<string> {
    const body = await this.#json(
      {
        method: 'POST',
        path: '/v1/query/param',
        body: { param_name: name, height: options?.height ?? 0 },
      },
      options,
      (value) => shapes.parameter(value),
    );
    return body.parameter_value;
  }

  /** `GET /v1/query/all_chain_params`. */
  async allParams(options?: CallOptions): Promise<Parameter[]> {
    return this.#json(
      { method: 'GET', path: '/v1/query/all_chain_params', body: undefined },
      options,
      shapes.parameters,
    );
  }

  /** `GET /v1/p2p/staked_actors_address_book`. */
  async addressBook(
    query: { actorType: RpcActorType; height?: number },
    options?: CallOptions,
  ): Promise<AddressBook> {
    const params = new URLSearchParams({ actor_type: query.actorType });
    if (query.height !== undefined) params.set('height', String(query.height));
    return this.#json(
      {
        method: 'GET',
        path: `/v1/p2p/staked_actors_address_book?${params.toString()}`,
        body: undefined,
      },
      options,
      shapes.addressBook,
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

  /** A 200 JSON body, checked by `check` (which also turns Go's `null` lists into []). */
  async #json<T>(
    call: { method: Method; path: string; body: unknown },
    options: CallOptions | undefined,
    check: (value: unknown) => T,
  ): Promise<T> {
    const { method, path, body } = call;
    const text = await this.#request(method, path, body, options);
    const url = this.baseUrl + path.replace(/\?.*$/, '');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error: unknown) {
      throw new RpcError(
        PocketErrorCode.rpcBadResponse,
        `${url} answered 200 with a body that is not JSON`,
        { url, body: text, cause: error },
      );
    }
    try {
      return check(value);
    } catch (error: unknown) {
      if (!(error instanceof shapes.ShapeError)) throw error;
      throw new RpcError(
        PocketErrorCode.rpcBadResponse,
        `${url} answered 200 with an unexpected body: ${error.message}`,
        { url, body: text, cause: error },
      );
    }
  }

  #mempoolUnreadable(path: string): RpcError {
    return new RpcError(PocketErrorCode.rpcMempoolUnreadable, `${MEMPOOL_UNREADABLE} (${path})`, {
      url: this.baseUrl + path,
    });
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
    // Aborted by `exchange` when the body passes the cap, so the transport stops reading it.
    const cap = new AbortController();
    const signal = AbortSignal.any([
      timeout,
      cap.signal,
      ...(options?.signal ? [options.signal] : []),
    ]);
    let status: number;
    let text: string;
    try {
      ({ status, text } = await exchange(
        this.#transport,
        { url, method, body, signal, maxBytes: this.#maxResponseBytes },
        cap,
      ));
    } catch (error: unknown) {
      if (error instanceof ResponseTooLarge) {
        throw new RpcError(
          PocketErrorCode.rpcResponseTooLarge,
          `${method} ${url} answered more than ${this.#maxResponseBytes} bytes`,
          { url, cause: error },
        );
      }
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

/** A response body over the client's cap (the request is aborted). */
class ResponseTooLarge extends Error {
  constructor() {
    super('response body too large');
    this.name = 'ResponseTooLarge';
  }
}

/**
 * The status and the body as text, read through `transport`. Rejects on transport failure or
 * abort, and with `ResponseTooLarge` — aborting the exchange through `abort` — as soon as the
 * declared length or the bytes read so far pass `maxBytes`, so an oversized body is never held.
 */
async function exchange(
  transport: HttpTransport,
  call: { url: string; method: HttpMethod; body: unknown; signal: AbortSignal; maxBytes: number },
  abort: AbortController,
): Promise<{ status: number; text: string }> {
  const { url, method, body, signal, maxBytes } = call;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const response = await transport({ url, method, body: payload, signal });
  const tooLarge = (): ResponseTooLarge => {
    const error = new ResponseTooLarge();
    abort.abort(error);
    return error;
  };
  if (response.contentLength !== undefined && response.contentLength > maxBytes) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return { status: response.status, text: Buffer.concat(chunks).toString('utf8') };
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

function isMempoolUnreadable(error: unknown): boolean {
  return (
    error instanceof RpcError &&
    error.status === 500 &&
    error.v1Code === V1Code.transactionNotCommitted
  );
}

function isHttpBody(error: unknown, status: number, bodyStart: string): boolean {
  return (
    error instanceof RpcError && error.status === status && (error.body ?? '').startsWith(bodyStart)
  );
}

// The V1 RPC of a localnet node (rpc/v1/openapi.yaml): the paths, JSON shapes, status codes and
// error texts of V1's handlers, plus the localnet's debug actions under /v1/debug/. Where V1's Go
// handlers differ from the openapi file, the node's fidelity profile picks (rpc/handlers*.go and
// rpc/utils.go at 58c9b650 for `v1`).
import type { RequestListener } from 'node:http';
import type { Logger } from 'pino';
import { V1Error, v1Errors } from '../pocket/index.ts';
import { ACTOR_KINDS, ActorKind } from './actor-types.ts';
import { goHexDecode } from './go-format.ts';
import {
  bindJson,
  createRouter,
  dropConnection,
  echoError,
  empty,
  json,
  text,
  type HttpRequest,
  type HttpResponse,
  type Route,
} from './http-router.ts';
import type { LocalnetNode } from './node.ts';
import { isPacemakerMode, PacemakerMode } from './pacemaker.ts';
import { blockView, indexedTransaction, protocolActor } from './rpc-views.ts';

/** What `GET /v1/version` answers (V1's `app.AppVersion` default). */
export const RPC_VERSION = 'v0.0.1-pre-alpha.1';

const BAD_REQUEST = 'bad request';
/** V1's Postgres answer for a missing row. */
const NO_ROWS = 'no rows in result set';
/** V1's badger answer for a missing key (tx index, block store). */
const KEY_NOT_FOUND = 'Key not found';
const MAX_PER_PAGE = 1000;
const DEFAULT_WAIT_MS = 30_000;

const RPC_ACTOR_KINDS: Readonly<Record<string, ActorKind>> = {
  application: ActorKind.application,
  servicer: ActorKind.servicer,
  fisherman: ActorKind.fisherman,
  validator: ActorKind.validator,
};

/** V1's `getPageIndexes`: a page of `total` items, or the 400 text, or `empty` (no items). */
export function pageIndexes(
  total: number,
  page: number,
  perPage: number,
): { start: number; end: number; totalPages: number } | { error: string } | 'empty' {
  if (total === 0) return 'empty';
  if (perPage > MAX_PER_PAGE) return { error: `per_page has a max value of ${MAX_PER_PAGE}` };
  if (page <= 0 || perPage <= 0) return { error: 'page and per_page must both be greater than 0' };
  const totalPages = Math.ceil(total / perPage);
  const start = (page - 1) * perPage;
  if (start > total - 1) {
    return { error: `starting page too high: got ${page}, total pages: ${totalPages}` };
  }
  return { start, end: Math.min(page * perPage, total) - 1, totalPages };
}

export function createRpcListener(node: LocalnetNode, log: Logger): RequestListener {
  const ctx = rpcContext(node);
  const { rpc } = ctx;
  const routes: Route[] = [
    ...nodeRoutes(ctx),
    ...actorRoutes(ctx),
    ...transactionRoutes(ctx),
    ...chainRoutes(ctx),
  ];
  // V1 has no debug routes: its debug messages travel over P2P (app/client/cli/debug.go:257-270).
  // The intended profile has them when asked for (`--debug-routes`), for no browser.
  if (rpc.debugRoutes && node.debugRoutes) routes.push(...debugRoutes(node));
  return createRouter(rpc.goKeyOrder ? routes.map(inGoKeyOrder) : routes, {
    bodyLimit: rpc.bodyLimit ? 16 * 1024 * 1024 : Infinity,
    headAsGet: rpc.headAsGet,
    onError: (error, request) =>
      log.error({ err: error, path: request.path }, 'RPC handler failed'),
  });
}

/** What the RPC routes read: the node, its profile's RPC rules, and V1's shared readers. */
interface RpcContext {
  node: LocalnetNode;
  rpc: LocalnetNode['profile']['rpc'];
  /** V1's `getQueryHeight`: 0 means the last committed height; later heights read the latest. */
  queryHeight: (height: number) => number;
  /** The mempool queries' 500 `CODE: 135` while anything is pending (the v1 profile). */
  mempoolUnreadable: () => HttpResponse | undefined;
  /** `{address, height}` bodies of /v1/query/account and /v1/query/balance, read as V1 does. */
  accountOf: (
    request: HttpRequest,
  ) => { address: string; amount: bigint } | { error: HttpResponse };
}

function rpcContext(node: LocalnetNode): RpcContext {
  const rpc = node.profile.rpc;
  /**
   * V1 renders mempool transactions through `GetIndexedTransaction`, which fails with 135 for
   * any transaction not yet committed (rpc/utils.go:364-373, utility/transaction.go:55-58): with
   * anything pending, the mempool queries answer 500 `CODE: 135`.
   */
  const mempoolUnreadable = (): HttpResponse | undefined =>
    rpc.mempoolUnreadableWhenBusy && node.mempool.size > 0
      ? text(500, v1Errors.transactionNotCommitted().text)
      : undefined;
  /** V1's `getQueryHeight`: 0 means the last committed height; later heights read the latest. */
  const queryHeight = (height: number) =>
    height === 0 ? node.chain.height : Math.max(0, Math.min(height, node.chain.height));

  /** `{address, height}` bodies of /v1/query/account and /v1/query/balance, read as V1 does. */
  const accountOf = (
    request: HttpRequest,
  ): { address: string; amount: bigint } | { error: HttpResponse } => {
    const body = bindJson(request, { address: 'string', height: 'int' }, rpc.echoFormBinding);
    if (body === undefined) return { error: text(400, BAD_REQUEST) };
    const address = goHexDecode(body.address);
    if (typeof address === 'string') return { error: text(400, address) };
    const amount = node.chain.state
      .at(queryHeight(body.height))
      .account(body.address.toLowerCase());
    return { address: body.address, amount };
  };
  return { node, rpc, queryHeight, mempoolUnreadable, accountOf };
}

/** Health, version, consensus state, height, and the transaction broadcast. */
function nodeRoutes(ctx: RpcContext): Route[] {
  const { node, rpc } = ctx;
  return [
    { method: 'GET', path: '/v1/health', handler: () => empty() },
    { method: 'GET', path: '/v1/version', handler: () => text(200, RPC_VERSION) },
    { method: 'GET', path: '/v1/consensus/state', handler: () => json(200, node.consensusState()) },
    {
      method: 'GET',
      path: '/v1/query/height',
      handler: () => json(200, { height: node.chain.height }),
    },
    {
      method: 'POST',
      path: '/v1/client/broadcast_tx_sync',
      handler: (request) => {
        const body = bindJson(
          request,
          { address: 'string', raw_hex_bytes: 'string' },
          rpc.echoFormBinding,
        );
        if (body === undefined) return text(400, BAD_REQUEST);
        const bytes = goHexDecode(body.raw_hex_bytes);
        if (typeof bytes === 'string') return text(400, 'cannot decode tx bytes');
        try {
          node.submit(bytes);
        } catch (error: unknown) {
          if (error instanceof V1Error) return text(500, error.text);
          throw error;
        }
        return empty();
      },
    },
  ];
}

/** A validator, the validators page by page, an account and its balance. */
function actorRoutes(ctx: RpcContext): Route[] {
  const { node, rpc, queryHeight, accountOf } = ctx;
  return [
    {
      method: 'POST',
      path: '/v1/query/validator',
      handler: (request) => {
        const body = bindJson(request, { address: 'string', height: 'int' }, rpc.echoFormBinding);
        if (body === undefined) return text(400, BAD_REQUEST);
        const address = goHexDecode(body.address);
        if (typeof address === 'string') return text(500, address);
        const actor = node.chain.state
          .at(queryHeight(body.height))
          .actor(ActorKind.validator, body.address.toLowerCase());
        return actor === undefined ? text(500, NO_ROWS) : json(200, protocolActor(actor));
      },
    },
    {
      method: 'POST',
      path: '/v1/query/validators',
      handler: (request) => {
        const body = bindJson(
          request,
          {
            height: 'int',
            page: 'int',
            per_page: 'int',
            sort: 'string',
          },
          rpc.echoFormBinding,
        );
        if (body === undefined) return text(400, BAD_REQUEST);
        const all = node.chain.state.at(queryHeight(body.height)).actors(ActorKind.validator);
        const page = pageIndexes(all.length, body.page, body.per_page);
        if (page === 'empty') {
          return json(200, { validators: null, total_validators: 0, page: 0, total_pages: 0 });
        }
        if ('error' in page) return text(400, page.error);
        return json(200, {
          validators: all.slice(page.start, page.end + 1).map(protocolActor),
          total_validators: all.length,
          page: body.page,
          total_pages: page.totalPages,
        });
      },
    },
    {
      method: 'POST',
      path: '/v1/query/account',
      handler: (request) => {
        const found = accountOf(request);
        if ('error' in found) return found.error;
        return json(200, {
          address: found.address,
          coins: [{ amount: found.amount.toString(), denom: 'upokt' }],
        });
      },
    },
    {
      method: 'POST',
      path: '/v1/query/balance',
      handler: (request) => {
        const found = accountOf(request);
        if ('error' in found) return found.error;
        return json(200, { balance: Number(found.amount) });
      },
    },
  ];
}

/** A committed transaction, and the mempool: one pending transaction, or a page of them. */
function transactionRoutes(ctx: RpcContext): Route[] {
  const { node, rpc, mempoolUnreadable } = ctx;
  return [
    {
      method: 'POST',
      path: '/v1/query/tx',
      handler: (request) => {
        const body = bindJson(request, { hash: 'string' }, rpc.echoFormBinding);
        if (body === undefined) return text(400, BAD_REQUEST);
        const hash = goHexDecode(body.hash);
        if (typeof hash === 'string') return text(500, hash);
        const record = node.chain.transaction(body.hash.toLowerCase());
        if (record === undefined) return text(500, KEY_NOT_FOUND);
        return json(200, indexedTransaction(record.tx, record, node.chain));
      },
    },
    {
      method: 'POST',
      path: '/v1/query/unconfirmed_tx',
      handler: (request) => {
        const body = bindJson(request, { hash: 'string' }, rpc.echoFormBinding);
        if (body === undefined) return text(400, BAD_REQUEST);
        // V1's mempool is keyed by the lowercase hex hash, looked up as given.
        const pending = node.mempool.get(
          rpc.hashCaseSensitive ? body.hash : body.hash.toLowerCase(),
        );
        if (pending === undefined) return text(400, `hash not found in mempool: ${body.hash}`);
        const unreadable = mempoolUnreadable();
        if (unreadable !== undefined) return unreadable;
        const index = node.mempool.indexOf(pending.tx.hash);
        return json(200, indexedTransaction(pending.tx, { height: 0, index, code: 0 }, node.chain));
      },
    },
    {
      method: 'POST',
      path: '/v1/query/unconfirmed_txs',
      handler: (request) => {
        const body = bindJson(
          request,
          { page: 'int', per_page: 'int', sort: 'string' },
          rpc.echoFormBinding,
        );
        if (body === undefined) return text(400, BAD_REQUEST);
        const all = node.mempool.list();
        const page = pageIndexes(all.length, body.page, body.per_page);
        if (page === 'empty') {
          return json(200, { transactions: null, total_txs: 0, page: 0, total_pages: 0 });
        }
        if ('error' in page) return text(400, page.error);
        const unreadable = mempoolUnreadable();
        if (unreadable !== undefined) return unreadable;
        return json(200, {
          transactions: all
            .slice(page.start, page.end + 1)
            .map((p, i) =>
              indexedTransaction(p.tx, { height: 0, index: page.start + i, code: 0 }, node.chain),
            ),
          total_txs: all.length,
          page: body.page,
          total_pages: page.totalPages,
        });
      },
    },
  ];
}

/** A block, the parameters, the node's roles and the staked actors' address book. */
function chainRoutes(ctx: RpcContext): Route[] {
  const { node, rpc, queryHeight } = ctx;
  return [
    {
      method: 'POST',
      path: '/v1/query/block',
      handler: (request) => {
        const body = bindJson(request, { height: 'int' }, rpc.echoFormBinding);
        if (body === undefined) return text(400, BAD_REQUEST);
        const height = body.height === 0 ? node.chain.height : body.height;
        const committed = node.chain.block(height);
        if (committed === undefined) return text(500, KEY_NOT_FOUND);
        const view = blockView(committed, node.chain);
        // V1's handler returns the block itself (rpc/handlers_query.go:262), not the openapi's
        // `{"block": …}`.
        return json(200, rpc.wrapBlock ? { block: view } : view);
      },
    },
    {
      method: 'POST',
      path: '/v1/query/param',
      handler: (request) => {
        const body = bindJson(
          request,
          { param_name: 'string', height: 'int' },
          rpc.echoFormBinding,
        );
        if (body === undefined) return text(400, BAD_REQUEST);
        const value = node.chain.state.at(queryHeight(body.height)).param(body.param_name);
        if (value === undefined) return text(500, NO_ROWS);
        return json(200, { parameter_name: body.param_name, parameter_value: value });
      },
    },
    {
      method: 'GET',
      path: '/v1/query/all_chain_params',
      handler: () =>
        json(
          200,
          node.chain.state
            .params()
            .map(([name, value]) => ({ parameter_name: name, parameter_value: value })),
        ),
    },
    {
      method: 'POST',
      path: '/v1/query/nodeRoles',
      handler: () => json(200, { node_roles: node.address === undefined ? [] : ['validator'] }),
    },
    {
      method: 'GET',
      path: '/v1/p2p/staked_actors_address_book',
      handler: (request) =>
        rpc.addressBookEveryRow ? v1AddressBook(node, request) : addressBook(node, request),
    },
  ];
}

/** The debug actions (trigger a view, switch the pacemaker, reset, the state): never in V1. */
function debugRoutes(node: LocalnetNode): Route[] {
  return [
    {
      method: 'POST',
      path: '/v1/debug/trigger_view',
      stateChanging: true,
      handler: async (request) => {
        const height = request.query.get('height');
        // Strictly a whole number: a typo must not silently turn the guard against a second
        // block off (0 is genesis, committed already: nothing is triggered).
        if (height !== null && !(/^\d{1,15}$/.test(height) && Number.isSafeInteger(Number(height))))
          return text(400, 'height must be a whole number (the height to commit)');
        const target = await node.triggerView(height === null ? undefined : Number(height));
        if (request.query.get('wait') !== 'true') return json(200, { height: node.chain.height });
        const timeoutMs = Number(request.query.get('timeout_ms') ?? DEFAULT_WAIT_MS);
        const committed = await node.waitForHeight(
          target.height,
          Number.isFinite(timeoutMs) && timeoutMs > 0 ? timeoutMs : DEFAULT_WAIT_MS,
        );
        return json(committed ? 200 : 504, { height: node.chain.height });
      },
    },
    {
      method: 'POST',
      path: '/v1/debug/toggle_pacemaker_mode',
      stateChanging: true,
      handler: (request) => {
        const requested = request.query.get('mode');
        const mode = isPacemakerMode(requested)
          ? requested
          : node.pacemakerMode === PacemakerMode.manual
            ? PacemakerMode.auto
            : PacemakerMode.manual;
        node.setPacemaker(mode);
        return json(200, { mode });
      },
    },
    {
      method: 'POST',
      path: '/v1/debug/reset_to_genesis',
      stateChanging: true,
      handler: () => {
        node.resetToGenesis();
        return json(200, { height: node.chain.height });
      },
    },
    { method: 'GET', path: '/v1/debug/state', handler: () => json(200, node.describe()) },
  ];
}

/**
 * `GET /v1/p2p/staked_actors_address_book`: the actors staked at `height` (default: the height
 * being decided). Validators are the active set that signs that height; without `actor_type`
 * every type is listed (V1 dereferences a nil pointer there).
 */
function addressBook(node: LocalnetNode, request: HttpRequest): HttpResponse {
  const raw = request.query.get('height');
  const live = node.chain.height + 1;
  const height = raw === null ? live : Number(raw);
  if (!Number.isSafeInteger(height) || height < 0) return text(400, BAD_REQUEST);
  const at = Math.max(1, Math.min(height, live));
  const kind = RPC_ACTOR_KINDS[request.query.get('actor_type') ?? ''];
  const actors = [];
  for (const each of kind === undefined ? ACTOR_KINDS : [kind]) {
    if (each === ActorKind.validator) {
      for (const member of node.chain.validatorSet(at).members) {
        actors.push({
          address: member.address,
          type: 'validator',
          public_key: member.publicKeyHex,
          service_url: member.serviceUrl,
        });
      }
      continue;
    }
    for (const actor of node.chain.state.at(at - 1).actors(each)) {
      if (actor.unstakingHeight !== -1 || actor.pausedHeight !== -1) continue;
      const view = protocolActor(actor);
      actors.push({
        address: view.address,
        type: view.actor_type,
        public_key: view.public_key,
        service_url: view.service_url,
      });
    }
  }
  return json(200, { actors: actors.length === 0 ? null : actors, height });
}

/** V1's actor getters for the address book (rpc/utils.go:460-474); anything else: every type. */
const V1_ADDRESS_BOOK_KINDS: Readonly<Record<string, readonly ActorKind[]>> = {
  application: [ActorKind.application],
  fisherman: [ActorKind.fisherman],
  servicer: [ActorKind.servicer],
  validator: [ActorKind.validator],
};
/** `GetAllStakedActors`' order (persistence/actor.go:154-166). */
const V1_ALL_STAKED = [
  ActorKind.validator,
  ActorKind.servicer,
  ActorKind.fisherman,
  ActorKind.application,
];

/**
 * `GET /v1/p2p/staked_actors_address_book` as V1's handler runs it (rpc/handlers.go:179-217):
 * every row with a height up to `height` (default: the height being decided), no status filter
 * (persistence/types/actor_shared_sql.go:87-94), `null` when there are none. The generated
 * wrapper answers a malformed `height` with Echo's 400 JSON (oapi-codegen v1.12.4
 * echo-wrappers.tmpl, runtime/bindstring.go); a missing `actor_type` is a nil dereference
 * (rpc/utils.go:461), a panic that Go's server answers by closing the connection.
 */
function v1AddressBook(node: LocalnetNode, request: HttpRequest): HttpResponse {
  const raw = request.query.get('height');
  let height = node.chain.height + 1;
  if (raw !== null) {
    const parsed = goParseInt64(raw);
    if (typeof parsed === 'string') {
      return echoError(
        400,
        `Invalid format for parameter height: error binding string parameter: strconv.ParseInt: parsing ${JSON.stringify(raw)}: ${parsed}`,
      );
    }
    height = parsed;
  }
  const actorType = request.query.get('actor_type');
  if (actorType === null) return dropConnection();
  const actors = [];
  if (height >= 0) {
    const state = node.chain.state.at(Math.min(height, node.chain.height));
    for (const kind of V1_ADDRESS_BOOK_KINDS[actorType] ?? V1_ALL_STAKED) {
      for (const actor of state.actors(kind)) {
        const view = protocolActor(actor);
        actors.push({
          address: view.address,
          type: view.actor_type,
          public_key: view.public_key,
          service_url: view.service_url,
        });
      }
    }
  }
  return json(200, { actors: actors.length === 0 ? null : actors, height });
}

const INT64_MAX = 2n ** 63n - 1n;

/** Go's `strconv.ParseInt(s, 10, 64)`: the value (clamped to a safe number), or its error. */
function goParseInt64(text: string): number | string {
  if (!/^[+-]?\d+$/.test(text)) return 'invalid syntax';
  const value = BigInt(text);
  if (value > INT64_MAX || value < -INT64_MAX - 1n) return 'value out of range';
  return Number(value);
}

/**
 * A route whose JSON answers list object keys as V1's Go server writes them: oapi-codegen sorts
 * each schema's properties into struct field order (pkg/codegen/schema.go:351) and Go sorts map
 * keys, so every object's keys come out in byte order.
 */
function inGoKeyOrder(route: Route): Route {
  return {
    ...route,
    handler: async (request) => {
      const response = await route.handler(request);
      if (response.body === undefined || !response.contentType?.startsWith('application/json')) {
        return response;
      }
      return json(response.status, sortKeys(JSON.parse(response.body)));
    },
  };
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}

// The toy chain (toy-chain.ts) behind HTTP, for `cluster-manager run` (issue 32 item 3): a loopback
// server that answers what the toy's ChainPort needs as JSON, one tiny server per validator node
// (static discovery probes each node's own URL), a pacemaker that commits a block at an interval,
// and the chain's definition (`toy`, settings `CM_TOY_…`) whose port reads and sends over that
// HTTP. toy-chain-register.ts registers the definition for a `node --import` of the real CLI.
//
// The wire (all JSON): GET /height, /validators?height=N, /block?height=N (404: none), /mempool,
// /mempool/<hash>, /tx/<hash> (404: unknown), /balance/<address> ({balance: digits}), /genesis,
// /identity (null before block 1); POST /tx (a ToyTx: {outcome}), POST /commit ({height}). A node
// answers GET /height.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { ChainAdapter, PreparedTx, SendOutcome } from '../../src/manager/chain/adapter.ts';
import { defineChain } from '../../src/manager/chain/definition.ts';
import type {
  ChainBlock,
  ChainPort,
  ChainReads,
  CommittedTx,
  MempoolListing,
} from '../../src/manager/chain/port.ts';
import { ManagerError } from '../../src/manager/errors.ts';
import type { ActionKind, ChainValidator } from '../../src/manager/model.ts';
import { amount } from '../../src/manager/settings.ts';
import {
  TOY_CAPABILITIES,
  TOY_ID_SPEC,
  ToyErrors,
  toyIds,
  toyKeys,
  toyRules,
  toyStake,
  toyTx,
  UTOY,
  type ToyChain,
  type ToyTx,
} from './toy-chain.ts';

/** A listening loopback server and how to stop it. */
export interface Listening {
  readonly url: string;
  close(): Promise<void>;
}

async function listen(
  handle: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<Listening> {
  const server: Server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body, (_key, value: unknown) =>
    typeof value === 'bigint' ? value.toString() : value,
  );
  response.writeHead(status, { 'content-type': 'application/json' }).end(text);
}

async function bodyOf(request: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of request) text += (chunk as Buffer).toString('utf8');
  return JSON.parse(text) as unknown;
}

/** The chain's server: its reads, its mempool and its blocks, over HTTP. */
export async function serveToyChain(
  chain: ToyChain,
  options: { blockIntervalMs: number },
): Promise<Listening> {
  const reads = chain.reads();
  const route = async (method: string, path: string, query: URLSearchParams) => {
    const height = Number(query.get('height'));
    if (method === 'POST' && path === '/commit') return [200, { height: chain.commit().height }];
    if (method !== 'GET') return [404, { error: `no route ${method} ${path}` }];
    if (path === '/height') return [200, { height: chain.height }];
    if (path === '/validators') return [200, await reads.validators(height)];
    if (path === '/block') {
      const block = chain.blocks[height - 1];
      return block === undefined ? [404, { error: `no block ${height}` }] : [200, block];
    }
    if (path === '/mempool') return [200, await reads.mempool()];
    if (path.startsWith('/mempool/')) return [200, await reads.mempoolEntry(path.slice(9))];
    if (path.startsWith('/tx/')) {
      const tx = chain.transaction(path.slice(4));
      return tx === undefined ? [404, { error: 'unknown transaction' }] : [200, tx];
    }
    if (path.startsWith('/balance/'))
      return [200, { balance: (await reads.balance(path.slice(9))).toString() }];
    if (path === '/genesis') return [200, await reads.genesisValidators()];
    if (path === '/identity') return [200, (await reads.identity()) ?? null];
    return [404, { error: `no route ${path}` }];
  };
  const served = await listen((request, response) => {
    const url = new URL(request.url ?? '/', 'http://toy');
    const answer =
      request.method === 'POST' && url.pathname === '/tx'
        ? bodyOf(request).then((tx) => [200, { outcome: chain.admit(tx as ToyTx) }] as const)
        : route(request.method ?? 'GET', url.pathname, url.searchParams);
    answer.then(
      ([status, body]) => reply(response, status as number, body),
      (error: unknown) => reply(response, 500, { error: String(error) }),
    );
  });
  const pacemaker = setInterval(() => chain.commit(), options.blockIntervalMs);
  return {
    url: served.url,
    close: async () => {
      clearInterval(pacemaker);
      await served.close();
    },
  };
}

/** A validator's node: answers its height (the chain's), for readiness and `nodeHeight`. */
export function serveToyNode(chain: ToyChain): Promise<Listening> {
  return listen((request, response) => {
    if (request.url === '/height') reply(response, 200, { height: chain.height });
    else reply(response, 404, { error: 'no route' });
  });
}

async function get<T>(url: string, signal?: AbortSignal): Promise<T | undefined> {
  let response: Response;
  try {
    response = await fetch(url, { signal: signal ?? AbortSignal.timeout(5_000) });
  } catch (error: unknown) {
    throw new ManagerError('CHAIN_UNAVAILABLE', `toy chain: GET ${url}: ${String(error)}`, {
      cause: error,
    });
  }
  if (response.status === 404) return undefined;
  if (!response.ok)
    throw new ManagerError('CHAIN_UNAVAILABLE', `toy chain: GET ${url}: ${response.status}`);
  return (await response.json()) as T;
}

async function post<T>(url: string, body: unknown, signal: AbortSignal): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
      signal,
    });
  } catch (error: unknown) {
    throw new ManagerError('CHAIN_UNAVAILABLE', `toy chain: POST ${url}: ${String(error)}`, {
      cause: error,
    });
  }
  if (!response.ok)
    throw new ManagerError('CHAIN_UNAVAILABLE', `toy chain: POST ${url}: ${response.status}`);
  return (await response.json()) as T;
}

/** The toy's reads over HTTP (what ToyChain.reads() answers in memory). */
function httpReads(base: string): ChainReads {
  const must = async <T>(path: string, signal?: AbortSignal): Promise<T> => {
    const value = await get<T>(`${base}${path}`, signal);
    if (value === undefined) throw new ManagerError('CHAIN_UNAVAILABLE', `toy chain: no ${path}`);
    return value;
  };
  return {
    height: async (o) => (await must<{ height: number }>('/height', o?.signal)).height,
    validators: (height, o) => must<ChainValidator[]>(`/validators?height=${height}`, o?.signal),
    block: (height, o) => must<ChainBlock>(`/block?height=${height}`, o?.signal),
    mempool: (o) => must<MempoolListing>('/mempool', o?.signal),
    mempoolEntry: (hash, o) =>
      must<{ inMempool: boolean; kind: ActionKind | undefined }>(
        `/mempool/${encodeURIComponent(hash)}`,
        o?.signal,
      ),
    transaction: (hash, o) => get<CommittedTx>(`${base}/tx/${encodeURIComponent(hash)}`, o?.signal),
    balance: async (address, o) =>
      BigInt(
        (await must<{ balance: string }>(`/balance/${encodeURIComponent(address)}`, o?.signal))
          .balance,
      ),
    genesisValidators: () => must<string[]>('/genesis'),
    identity: async () =>
      (await get<{ chainId: string; genesisHash: string } | null>(`${base}/identity`)) ?? undefined,
  };
}

/** The toy's port over HTTP: the chain at `base`, stakes of `stakeAmount` utoy. */
export function toyHttpPort(base: string, stakeAmount: string): ChainPort {
  const root = base.replace(/\/+$/, '');
  const sendTx = async (txHex: string, signal: AbortSignal): Promise<SendOutcome> =>
    (await post<{ outcome: SendOutcome }>(`${root}/tx`, JSON.parse(txHex), signal)).outcome;
  const sender: ChainAdapter = {
    transport: {
      name: 'toy-http',
      resendsSameBytes: true,
      maybeSentCodes: [],
      retryableMaySend: true,
      viewTrigger: 'POST /commit on the toy chain',
    },
    prepare(request): PreparedTx {
      // Synchronous and unique: the journal entry precedes the send, and names this one.
      const hash = `toy-tx-${randomUUID()}`;
      return { txHash: hash, txHex: JSON.stringify(toyTx(request, hash)) };
    },
    send: (_request, prepared, signal) => {
      if (prepared.txHex === undefined)
        throw new ManagerError('INTERNAL', 'toy send without a prepared transaction');
      return sendTx(prepared.txHex, signal);
    },
    resend: (record, signal) =>
      record.txHex === undefined ? undefined : sendTx(record.txHex, signal),
    triggerView: async (signal) => {
      await post(`${root}/commit`, {}, signal);
    },
  };
  const nodeHeight = async (url: string, signal: AbortSignal): Promise<number> => {
    const answer = await get<{ height: number }>(`${url.replace(/\/+$/, '')}/height`, signal);
    if (answer === undefined) throw new Error(`no toy node at ${url}`);
    return answer.height;
  };
  return {
    ids: toyIds,
    keys: toyKeys,
    capabilities: TOY_CAPABILITIES,
    stake: toyStake(stakeAmount),
    sender,
    rules: toyRules,
    reads: httpReads(root),
    nodeHeight,
    nodeReady: async (url, signal) => {
      await nodeHeight(url, signal);
    },
  };
}

/** The toy chain as `CM_CHAIN=toy` selects it: one setting of its own, its ids and errors. */
export const toyChainDefinition = defineChain({
  name: 'toy',
  summary: 'The in-memory toy chain of the tests, over HTTP (test/support/toy-chain-http.ts).',
  settings: {
    stakeAmount: amount({
      env: 'CM_TOY_STAKE_AMOUNT',
      flag: 'toy-stake-amount',
      default: '50',
      denomination: UTOY,
      description: 'What each stake locks, in utoy.',
    }),
  },
  ids: TOY_ID_SPEC,
  errors: ToyErrors,
  port: (rpcUrl, values) => toyHttpPort(rpcUrl, values.stakeAmount),
});

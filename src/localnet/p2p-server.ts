// The p2p server (the port a validator stakes as its `service_url`): gossip, consensus messages,
// status and blocks for sync, round state for catch-up, forwarded debug actions. JSON over HTTP.
import type { RequestListener } from 'node:http';
import type { Logger } from 'pino';
import { createRouter, empty, json, text, type HttpRequest, type Route } from './http-router.ts';
import type { DebugAction, LocalnetNode } from './node.ts';
import { isPacemakerMode } from './pacemaker.ts';
import { parseHexList } from './wire.ts';

function parseBody(request: HttpRequest): unknown {
  try {
    return JSON.parse(request.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

function parseDebug(value: unknown): DebugAction | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const body = value as Record<string, unknown>;
  switch (body.action) {
    case 'trigger_view':
      return Number.isSafeInteger(body.height) && Number.isSafeInteger(body.round)
        ? { action: 'trigger_view', height: body.height as number, round: body.round as number }
        : undefined;
    case 'set_pacemaker':
      return isPacemakerMode(body.mode) ? { action: 'set_pacemaker', mode: body.mode } : undefined;
    case 'reset_to_genesis':
      return { action: 'reset_to_genesis' };
    default:
      return undefined;
  }
}

export function createP2pListener(node: LocalnetNode, log: Logger): RequestListener {
  const routes: Route[] = [
    { method: 'GET', path: '/p2p/v1/status', handler: () => json(200, node.status()) },
    {
      method: 'POST',
      path: '/p2p/v1/txs',
      handler: (request) => {
        const txs = parseHexList((parseBody(request) as { txs?: unknown } | undefined)?.txs);
        if (txs === undefined) return text(400, 'bad request');
        node.receiveTxs(txs);
        return empty();
      },
    },
    {
      method: 'POST',
      path: '/p2p/v1/consensus',
      handler: (request) =>
        node.receiveConsensus(parseBody(request)) ? empty() : text(400, 'bad request'),
    },
    { method: 'GET', path: '/p2p/v1/round-state', handler: () => json(200, node.roundState()) },
    {
      method: 'GET',
      path: '/p2p/v1/blocks',
      handler: (request) => {
        const from = Number(request.query.get('from'));
        const to = Number(request.query.get('to'));
        if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) {
          return text(400, 'bad request');
        }
        return json(200, { blocks: node.blocks(from, to) });
      },
    },
    {
      method: 'POST',
      path: '/p2p/v1/debug',
      handler: (request) => {
        const action = parseDebug(parseBody(request));
        if (action === undefined) return text(400, 'bad request');
        node.receiveDebug(action);
        return empty();
      },
    },
  ];
  return createRouter(routes, {
    bodyLimit: 64 * 1024 * 1024,
    onError: (error, request) =>
      log.error({ err: error, path: request.path }, 'p2p handler failed'),
  });
}

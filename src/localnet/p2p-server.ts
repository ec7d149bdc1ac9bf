// The p2p server (the port a validator stakes as its `service_url`): gossip, consensus messages,
// status and blocks for sync, round state for catch-up, forwarded debug actions, and V1-style
// debug messages a client sends to each validator (`p1 Debug …`). JSON over HTTP.
import type { RequestListener } from 'node:http';
import type { Logger } from 'pino';
import { createRouter, empty, json, text, type HttpRequest, type Route } from './http-router.ts';
import { V1DebugAction, type DebugAction, type LocalnetNode } from './node.ts';
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

const V1_ACTIONS: readonly V1DebugAction[] = Object.values(V1DebugAction);
/** `DebugMessageAction` numbers (shared/messaging/proto/debug_message.proto). */
const V1_ACTION_NUMBERS: Readonly<Record<number, V1DebugAction>> = {
  1: V1DebugAction.resetToGenesis,
  2: V1DebugAction.printNodeState,
  3: V1DebugAction.triggerNextView,
  4: V1DebugAction.togglePacemakerMode,
};

/**
 * A `DebugMessage` in protobuf's JSON form: `{"action": "DEBUG_CONSENSUS_TRIGGER_NEXT_VIEW" | 3,
 * "type": …}`. Only the consensus actions a node applies to itself are accepted.
 */
export function parseV1DebugMessage(value: unknown): V1DebugAction | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const action = (value as Record<string, unknown>).action;
  if (typeof action === 'number') return V1_ACTION_NUMBERS[action];
  return V1_ACTIONS.find((known) => known === action);
}

export function createP2pListener(node: LocalnetNode, log: Logger): RequestListener {
  const routes: Route[] = [
    { method: 'GET', path: '/p2p/v1/status', handler: () => json(200, node.status()) },
    {
      method: 'POST',
      path: '/p2p/v1/txs',
      stateChanging: true,
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
      stateChanging: true,
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
  ];
  const debugRoutes: Route[] = [
    {
      // The RPC's debug actions, forwarded by a peer: off with them (node.debugRoutes), or a
      // node without debug routes could be reset through its p2p port.
      method: 'POST',
      path: '/p2p/v1/debug',
      stateChanging: true,
      handler: (request) => {
        const action = parseDebug(parseBody(request));
        if (action === undefined) return text(400, 'bad request');
        node.receiveDebug(action);
        return empty();
      },
    },
  ];
  const debugMessages: Route = {
    // Stands for V1's P2P `DebugMessage` (the one transport the stand-in cannot copy: V1 uses
    // libp2p and protobuf): applied by this node only; the client sends one to each validator.
    // V1 takes them from anyone (the v1 profile too); the intended profile when asked for.
    method: 'POST',
    path: '/p2p/v1/debug-message',
    stateChanging: true,
    handler: (request) => {
      const action = parseV1DebugMessage(parseBody(request));
      if (action === undefined) return text(400, 'bad request');
      node.receiveDebugMessage(action);
      return empty();
    },
  };
  // Intended: the debug actions when asked for. v1: V1's debug messages only, always.
  const asked = node.profile.rpc.debugRoutes && node.debugRoutes;
  if (asked) routes.push(...debugRoutes);
  if (asked || !node.profile.rpc.debugRoutes) routes.push(debugMessages);
  return createRouter(routes, {
    bodyLimit: 64 * 1024 * 1024,
    onError: (error, request) =>
      log.error({ err: error, path: request.path }, 'p2p handler failed'),
  });
}

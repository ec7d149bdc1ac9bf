// GET /v1/events: server-sent events (@fastify/sse) of phase changes, actions, heights, blocks
// (who signed them: the participation read's heights), pause and chain trust. A read like every other /v1 route (registered behind bearerAuth), with a bounded
// number of clients (503 TOO_MANY_STREAMS beyond it, with Retry-After) and backpressure per
// client (event-feed.ts): a client that does not read is dropped once its unsent events pass a
// bound, with the reason SLOW_CLIENT in the log.
import { fastifySSE } from '@fastify/sse';
import { ManagerError } from '../../errors.ts';
import type { PhaseChange } from '../../phase-tracker.ts';
import type { ActionRecord } from '../../model.ts';
import type { ParticipationSource } from '../../participation/participation.ts';
import type { ChainTrust } from '../../planner/plan.ts';
import type { ControlPlane } from '../control-plane.ts';
import { EventFeed } from '../event-feed.ts';
import type { RoutePlugin } from '../route-plugin.ts';
import { errorRef } from '../schemas.ts';

/** What the event stream follows: the readiness it starts with and the events after. */
export type EventControl = Pick<ControlPlane, 'readiness' | 'events'>;

/** Clients following the stream at once. */
export const MAX_EVENT_STREAMS = 32;
/** Unsent bytes a client may fall behind by before it is dropped. */
export const MAX_UNSENT_BYTES = 256 * 1024;
const HEARTBEAT_MS = 15_000;
const RETRY_MS = 2_000;

export interface EventRouteOptions {
  control: EventControl;
  maxStreams?: number | undefined;
  maxUnsentBytes?: number | undefined;
  /** Subscribes to the participation record's new heights (`block` events). */
  blocks?: ParticipationSource['onBlock'] | undefined;
}

/** Described in the document only: the body is a stream, not one JSON value. */
const eventStreamResponse = {
  200: {
    description:
      'A text/event-stream that stays open: `event: <name>` and `data: <JSON>` per event (docs/control-rpc.md).',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  },
};

export const eventRoutes: RoutePlugin<EventRouteOptions> = async (app, options) => {
  const { control } = options;
  const maxStreams = options.maxStreams ?? MAX_EVENT_STREAMS;
  const maxUnsent = options.maxUnsentBytes ?? MAX_UNSENT_BYTES;
  await app.register(fastifySSE, { heartbeatInterval: HEARTBEAT_MS });
  // Open streams, ended when the server closes (they would otherwise hold it open).
  const streams = new Set<() => void>();
  app.addHook('preClose', (done) => {
    for (const end of streams) end();
    streams.clear();
    done();
  });

  app.get(
    '/v1/events',
    {
      // 'manual': every client gets the stream, whatever its Accept header says (as before).
      sse: { kind: 'manual' },
      schema: {
        summary:
          'Server-sent events: `hello`, then phase changes (`phase`), actions (`action`), chain heights (`height`), committed blocks with their signers (`block`, a ParticipationHeight), pause (`paused`) and chain trust (`trust`)',
        description: `At most ${maxStreams} clients at once (503 TOO_MANY_STREAMS beyond); a client that falls ${maxUnsent} bytes behind is dropped.`,
        response: { ...eventStreamResponse, 503: errorRef },
      },
    },
    (request, reply) => {
      if (streams.size >= maxStreams) {
        void reply.header('retry-after', String(RETRY_MS / 1000));
        throw new ManagerError(
          'TOO_MANY_STREAMS',
          `${maxStreams} clients already follow the event stream; retry later`,
        );
      }
      const sse = reply.sse;
      const raw = reply.raw;
      sse.keepAlive();
      void reply.header('content-type', 'text/event-stream; charset=utf-8');
      const feed = new EventFeed({
        sink: {
          send: (message) => sse.send(message),
          unsentBytes: () => raw.writableLength,
          destroy: () => raw.destroy(),
        },
        maxUnsentBytes: maxUnsent,
        onDrop: (reason, unsent) =>
          request.log.info({ reason, unsent }, 'event stream dropped: the client does not read'),
      });
      const send = (event: string, data: unknown): void => feed.push({ event, data });
      feed.push({ data: undefined, retry: RETRY_MS });
      const readiness = control.readiness();
      send('hello', {
        height: readiness.chain.height,
        paused: readiness.paused,
        trusted: readiness.chain.trusted,
      });
      const onPhase = (change: PhaseChange): void =>
        send('phase', {
          key: change.key,
          id: change.id ?? null,
          from: change.from ?? null,
          to: change.to,
          reason: change.reason,
        });
      const onAction = (record: ActionRecord): void =>
        send('action', {
          seq: record.seq,
          validatorId: record.validatorId,
          kind: record.kind,
          state: record.state,
          txHash: record.txHash ?? null,
          height: record.committedHeight ?? record.sentHeight ?? record.preparedHeight,
          errorCode: record.errorCode ?? null,
        });
      const onHeight = (height: number): void => send('height', { height });
      const onPaused = (paused: boolean): void => send('paused', { paused });
      const onTrust = (trust: ChainTrust): void =>
        send('trust', { trusted: trust.trusted, reason: trust.reason ?? null });
      control.events.on('phase', onPhase);
      control.events.on('action', onAction);
      control.events.on('height', onHeight);
      control.events.on('paused', onPaused);
      control.events.on('trust', onTrust);
      const offBlocks = options.blocks?.((height) => send('block', height));
      const end = (): void => sse.close();
      streams.add(end);
      sse.onClose(() => {
        streams.delete(end);
        control.events.off('phase', onPhase);
        control.events.off('action', onAction);
        control.events.off('height', onHeight);
        control.events.off('paused', onPaused);
        control.events.off('trust', onTrust);
        offBlocks?.();
      });
      request.log.debug('event stream opened');
    },
  );
};

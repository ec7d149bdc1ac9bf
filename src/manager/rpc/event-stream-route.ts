// GET /v1/events: server-sent events of phase changes, actions, heights, pause and chain trust.
// A read like every other /v1 route (bearer token), with a bounded number of clients (503
// TOO_MANY_STREAMS beyond it, with Retry-After) and backpressure: a client that does not read
// is dropped once its unsent events pass a bound, never buffered without end.
import type { IncomingMessage, ServerResponse as RawResponse } from 'node:http';
import type { FastifyInstance, RawServerDefault } from 'fastify';
import type { Logger } from '../logger.ts';
import { ManagerError } from '../errors.ts';
import type { PhaseChange } from '../manager.ts';
import type { ActionRecord } from '../model.ts';
import type { ChainTrust } from '../planner/plan.ts';
import type { ControlPlane } from './control-plane.ts';
import { eventStreamResponse } from './schemas.ts';

/** Clients following the stream at once. */
export const MAX_EVENT_STREAMS = 32;
/** Unsent bytes a client may fall behind by before it is dropped. */
export const MAX_UNSENT_BYTES = 256 * 1024;
const HEARTBEAT_MS = 15_000;
const RETRY_MS = 2_000;

export interface EventStreamOptions {
  control: ControlPlane;
  /** Checks the bearer token (throws UNAUTHORIZED). */
  authorize: (request: { headers: { authorization?: string | undefined } }) => Promise<void>;
  maxStreams?: number;
  maxUnsentBytes?: number;
}

export function registerEventStream(app: ControlApp, options: EventStreamOptions): void {
  const { control } = options;
  const maxStreams = options.maxStreams ?? MAX_EVENT_STREAMS;
  const maxUnsent = options.maxUnsentBytes ?? MAX_UNSENT_BYTES;
  // Open event streams, ended when the server closes (they would otherwise hold it open).
  const streams = new Set<{ close(): void; end(): void }>();
  app.addHook('preClose', (done) => {
    for (const stream of streams) {
      stream.close();
      stream.end();
    }
    streams.clear();
    done();
  });

  app.get(
    '/v1/events',
    {
      schema: {
        security: [{ bearer: [] }],
        summary:
          'Server-sent events: `hello`, then phase changes (`phase`), actions (`action`), chain heights (`height`), pause (`paused`) and chain trust (`trust`)',
        description: `At most ${maxStreams} clients at once (503 TOO_MANY_STREAMS beyond); a client that falls ${maxUnsent} bytes behind is dropped.`,
        response: {
          ...eventStreamResponse,
          401: { $ref: 'Error#' },
          503: { $ref: 'Error#' },
        },
      },
      onRequest: options.authorize,
    },
    (request, reply) => {
      if (streams.size >= maxStreams) {
        void reply.header('retry-after', String(RETRY_MS / 1000));
        throw new ManagerError(
          'TOO_MANY_STREAMS',
          `${maxStreams} clients already follow the event stream; retry later`,
        );
      }
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      let dropped = false;
      const write = (text: string): void => {
        if (dropped || raw.destroyed) return;
        if (raw.writableLength > maxUnsent) {
          // The client does not read: drop it rather than buffer its events without end.
          dropped = true;
          request.log.info(
            { unsent: raw.writableLength },
            'event stream dropped: the client does not read',
          );
          raw.destroy();
          return;
        }
        raw.write(text);
      };
      const send = (event: string, data: unknown): void =>
        write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      write(`retry: ${RETRY_MS}\n\n`);
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
      const heartbeat = setInterval(() => write(': keep-alive\n\n'), HEARTBEAT_MS);
      const close = (): void => {
        clearInterval(heartbeat);
        control.events.off('phase', onPhase);
        control.events.off('action', onAction);
        control.events.off('height', onHeight);
        control.events.off('paused', onPaused);
        control.events.off('trust', onTrust);
      };
      const stream = { close, end: () => raw.end() };
      streams.add(stream);
      raw.on('close', () => {
        streams.delete(stream);
        close();
      });
      request.log.debug('event stream opened');
    },
  );
}

/** The control RPC's fastify instance (with the manager's pino logger). */
type ControlApp = FastifyInstance<RawServerDefault, IncomingMessage, RawResponse, Logger>;

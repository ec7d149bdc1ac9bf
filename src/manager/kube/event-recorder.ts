// Kubernetes Events (core/v1) about pods and StatefulSets, with involvedObject.uid so that
// `kubectl describe` shows them, aggregated like client-go's recorder: a repeat of the same
// (object, type, reason, message) bumps `count` instead of creating a new Event.
import { randomBytes } from 'node:crypto';
import type { CoreV1Event } from '@kubernetes/client-node';
import { setHeaderOptions } from '@kubernetes/client-node/dist/middleware.js';
import { PatchStrategy } from '@kubernetes/client-node/dist/patch.js';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { CoreApi } from './lean-api.ts';

/** What an Event is about. */
export interface EventTarget {
  kind: string;
  apiVersion: string;
  name: string;
  namespace: string;
  uid: string;
}

export type EventType = 'Normal' | 'Warning';

export interface EventRecorderOptions {
  core: CoreApi;
  component: string;
  instance: string;
  logger: Logger;
  clock: Clock;
}

interface Recorded {
  name: string;
  count: number;
  firstTimestamp: Date;
}

const MAX_REMEMBERED = 4096;

/** Records Events; never throws (a failed Event is logged at debug and dropped). */
export class EventRecorder {
  readonly #options: EventRecorderOptions;
  readonly #recorded = new Map<string, Recorded>();

  constructor(options: EventRecorderOptions) {
    this.#options = options;
  }

  async record(
    target: EventTarget,
    type: EventType,
    reason: string,
    message: string,
  ): Promise<void> {
    const key = `${target.uid}\u0000${type}\u0000${reason}\u0000${message}`;
    const now = new Date(this.#options.clock.now());
    const previous = this.#recorded.get(key);
    try {
      if (previous !== undefined) {
        previous.count++;
        await this.#options.core.patchNamespacedEvent(
          {
            name: previous.name,
            namespace: target.namespace,
            body: { count: previous.count, lastTimestamp: now.toISOString() },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        return;
      }
      const name = `${target.name}.${randomBytes(8).toString('hex')}`;
      const body: CoreV1Event = {
        metadata: { name, namespace: target.namespace },
        involvedObject: {
          kind: target.kind,
          apiVersion: target.apiVersion,
          name: target.name,
          namespace: target.namespace,
          uid: target.uid,
        },
        type,
        reason,
        message,
        count: 1,
        firstTimestamp: now,
        lastTimestamp: now,
        source: { component: this.#options.component, host: this.#options.instance },
        reportingComponent: this.#options.component,
        reportingInstance: this.#options.instance,
      };
      await this.#options.core.createNamespacedEvent({ namespace: target.namespace, body });
      if (this.#recorded.size >= MAX_REMEMBERED)
        this.#recorded.delete(this.#recorded.keys().next().value ?? '');
      this.#recorded.set(key, { name, count: 1, firstTimestamp: now });
    } catch (error: unknown) {
      if (previous !== undefined) this.#recorded.delete(key);
      this.#options.logger.debug({ reason, object: target.name, err: error }, 'event not recorded');
    }
  }
}

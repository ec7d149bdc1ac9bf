// Events without a cluster: each one is a log line (static discovery has no API to send it to).
import type { Logger } from '../logger.ts';
import type { EventSink, EventTarget, EventType } from './port.ts';

export class LogEventSink implements EventSink {
  readonly #logger: Logger;
  constructor(logger: Logger) {
    this.#logger = logger;
  }

  record(target: EventTarget, type: EventType, reason: string, message: string): Promise<void> {
    const fields = { event: reason, object: `${target.kind}/${target.name}` };
    if (type === 'Warning') this.#logger.warn(fields, message);
    else this.#logger.info(fields, message);
    return Promise.resolve();
  }
}

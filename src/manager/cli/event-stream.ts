// Reading a server-sent event stream (`GET /v1/events`) with eventsource-parser, which follows
// the WHATWG rules (CRLF or LF line ends, multi-line `data:`, comments, `retry:`, a chunk that
// splits a line or a character). Only named events are ours (`event: <name>`); their data is JSON.
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface StreamEvent {
  event: string;
  data: unknown;
}

/** Yields each complete named event of `body` as it arrives; ends with the stream. */
export async function* readEventStream(
  body: AsyncIterable<Uint8Array>,
): AsyncGenerator<StreamEvent> {
  const decoder = new TextDecoder();
  const ready: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => ready.push(message) });
  for await (const chunk of body) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    for (const message of ready.splice(0))
      if (message.event !== undefined)
        yield { event: message.event, data: JSON.parse(message.data) };
  }
}

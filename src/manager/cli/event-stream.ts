// Reading a server-sent event stream (`GET /v1/events`) with eventsource-parser, which follows
// the WHATWG rules (CRLF or LF line ends, multi-line `data:`, comments, `retry:`, a chunk that
// splits a line or a character). Only named events are ours (`event: <name>`); their data is JSON.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { CliError, ExitCode } from '../../cli/program.ts';

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
      if (message.event !== undefined) yield { event: message.event, data: parseData(message) };
  }
}

/** An event's JSON data; a named error (exit 1) when the server sent something else. */
function parseData(message: EventSourceMessage): unknown {
  try {
    return JSON.parse(message.data);
  } catch {
    throw new CliError(
      `the event stream sent a "${printable(message.event ?? '')}" event whose data is not JSON; is the server a cluster-manager?`,
      ExitCode.failed,
    );
  }
}

/** `text` with control characters (terminal escapes among them) written as \u escapes. */
export function printable(text: string): string {
  return text.replace(
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    /[\u0000-\u001f\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

// Parsing of a server-sent event stream (`GET /v1/events`): `event:` and `data:` lines, one
// event per blank-line-separated block; data is JSON.

export interface StreamEvent {
  event: string;
  data: unknown;
}

/** Yields each complete event of `body` as it arrives; ends with the stream. */
export async function* readEventStream(
  body: AsyncIterable<Uint8Array>,
): AsyncGenerator<StreamEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event !== undefined && data !== undefined) yield { event, data: JSON.parse(data) };
    }
  }
}

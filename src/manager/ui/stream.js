// @ts-check
// The manager's event stream (GET /v1/events) read with fetch: EventSource cannot send the
// Authorization header, and the token must not go in the URL. Server-sent events as the WHATWG
// rules put them: `event:` and `data:` lines (several data lines joined by newlines), an event
// ended by a blank line, comments ignored, CR LF or LF.

export class StreamRefused extends Error {
  /** @param {number} status @param {string} message */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * Follows the stream until it ends or `signal` aborts; calls `onEvent` with each named event's
 * name and JSON data. Throws StreamRefused when the manager answers with an error.
 * @param {string} token
 * @param {(event: string, data: unknown) => void} onEvent
 * @param {AbortSignal} signal
 */
export async function follow(token, onEvent, signal) {
  const response = await fetch('/v1/events', {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    cache: 'no-store',
    signal,
  });
  if (!response.ok || response.body === null) {
    const body = await response.json().catch(() => ({}));
    throw new StreamRefused(response.status, body?.error?.message ?? `HTTP ${response.status}`);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let event = '';
  /** @type {string[]} */
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') {
        if (event !== '' && data.length > 0) dispatch(event, data.join('\n'), onEvent);
        event = '';
        data = [];
      } else if (line.startsWith('event:')) event = field(line, 6);
      else if (line.startsWith('data:')) data.push(field(line, 5));
    }
  }
}

/** @param {string} line @param {number} at */
function field(line, at) {
  const value = line.slice(at);
  return value.startsWith(' ') ? value.slice(1) : value;
}

/** @param {string} event @param {string} text @param {(event: string, data: unknown) => void} onEvent */
function dispatch(event, text, onEvent) {
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    return;
  }
  onEvent(event, data);
}

// A raw watch over fetch for tests that need to see every line (and the end of the stream).

export interface WatchLine {
  type: string;
  object: {
    kind?: string;
    metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> };
    code?: number;
    reason?: string;
  };
}

export interface RawWatch {
  events: WatchLine[];
  /** Resolves when the server ends the stream (with how long it was open, in ms). */
  ended: Promise<number>;
  stop(): void;
}

/** Opens `GET path?watch=true&…` and collects its events until the server ends it or `stop()`. */
export async function rawWatch(
  url: string,
  path: string,
  query: Record<string, string>,
): Promise<RawWatch> {
  const controller = new AbortController();
  const started = Date.now();
  const response = await fetch(
    `${url}${path}?${new URLSearchParams({ watch: 'true', ...query }).toString()}`,
    {
      signal: controller.signal,
    },
  );
  if (response.status !== 200 || response.body === null)
    throw new Error(`watch answered ${response.status}`);
  const events: WatchLine[] = [];
  const body = response.body;
  const ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let newline = buffer.indexOf('\n');
        while (newline !== -1) {
          events.push(JSON.parse(buffer.slice(0, newline)) as WatchLine);
          buffer = buffer.slice(newline + 1);
          newline = buffer.indexOf('\n');
        }
      }
    } catch {
      // aborted by stop()
    }
    return Date.now() - started;
  })();
  return { events, ended, stop: () => controller.abort() };
}

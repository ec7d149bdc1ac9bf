// A request's cancellation: long-running routes (scale, trigger-view, departures) stop waiting
// when their client closes the connection before the answer is written.
import type { ServerResponse } from 'node:http';

/** Aborts when the client closes the connection before the answer is written. */
export function clientGone(response: ServerResponse): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const onClose = (): void => {
    if (!response.writableFinished) controller.abort(new Error('client went away'));
  };
  response.on('close', onClose);
  return { signal: controller.signal, release: () => response.off('close', onClose) };
}

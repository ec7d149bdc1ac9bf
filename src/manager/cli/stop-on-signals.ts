// How `cluster-manager run` ends: one stop, on the first SIGTERM, SIGINT or SIGHUP (the terminal
// of a manager started by hand was closed: Node's default for it kills the process mid-write), or
// when the service fails to start. Whatever signal arrives after the first changes nothing: a Ctrl-C in `npm start`
// reaches the manager (SIGINT, the terminal's whole process group) and, a moment later, its
// supervisor's SIGTERM. When the handlers were removed at the first signal, the second met Node's
// default action and killed the manager halfway through its stop, the journal's -wal file left
// behind. The stop has its own bound (CM_SHUTDOWN_TIMEOUT); a supervisor that cannot wait for it
// sends SIGKILL. The handlers go once the stop is over.

/** What the signals stop (the running service of run.ts). */
export interface Stoppable {
  stop(): Promise<void>;
  /** Rejects if the service fails after it started (it is then stopped, and the error returned). */
  readonly failed: Promise<unknown>;
  readonly logger: { info(fields: object, message: string): void };
}

/** Where the signals come from (the process). */
export interface SignalSource {
  on(signal: StopSignal, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: StopSignal, listener: (signal: NodeJS.Signals) => void): unknown;
}

/** The signals that stop the manager. */
type StopSignal = 'SIGTERM' | 'SIGINT' | 'SIGHUP';
const STOP_SIGNALS: readonly StopSignal[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/**
 * Resolves once the service has stopped: with undefined after a signal, with the error when it
 * failed on its own.
 */
export function stopOnSignals(
  service: Stoppable,
  signals: SignalSource,
): Promise<Error | undefined> {
  return new Promise((resolve) => {
    let stopping = false;
    const stop = (failure: Error | undefined): void => {
      stopping = true;
      const over = (error: Error | undefined): void => {
        for (const signal of STOP_SIGNALS) signals.off(signal, onSignal);
        resolve(error);
      };
      // A stop that fails ends `run` with its error (was: never resolved, the rejection unhandled).
      service.stop().then(
        () => over(failure),
        (error: unknown) =>
          over(failure ?? (error instanceof Error ? error : new Error(String(error)))),
      );
    };
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) {
        service.logger.info({ signal }, 'already shutting down; the signal changes nothing');
        return;
      }
      service.logger.info({ signal }, 'shutting down');
      stop(undefined);
    };
    for (const signal of STOP_SIGNALS) signals.on(signal, onSignal);
    // A manager that cannot start stops and exits non-zero with the reason, instead of staying
    // up and never ready.
    service.failed.catch((error: unknown) => {
      if (!stopping) stop(error instanceof Error ? error : new Error(String(error)));
    });
  });
}

// Waits for a condition with a timeout (tests never sleep to synchronise).

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Said in the error when the time runs out. */
  what?: string;
}

/**
 * Polls `probe` until it returns something other than undefined/false (returned), or throws
 * after `timeoutMs` with the last error the probe threw.
 */
export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error: unknown) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out waiting for ${options.what ?? 'a condition'}${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 20));
  }
}

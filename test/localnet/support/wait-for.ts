// Polling a condition until it holds, instead of sleeping for a guessed time.

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Describes what was awaited, for the timeout error. */
  what?: string;
}

/** Resolves with the first truthy value `probe` returns; rejects after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  options: WaitOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
    } catch (error: unknown) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const reason = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(
        `timed out after ${options.timeoutMs} ms waiting for ${options.what ?? 'a condition'}${reason}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}

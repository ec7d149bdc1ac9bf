// Waiting on conditions, never on fixed sleeps: poll a probe until it passes or the time is up,
// then fail with what was expected and what was last seen.

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** What we wait for, in words (the failure message starts with it). */
  what: string;
}

/** A probe returns `true` when satisfied, or a description of what it sees instead. */
export type Probe = () => Promise<true | string> | true | string;

export class WaitTimeout extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WaitTimeout';
  }
}

export async function waitFor(probe: Probe, options: WaitOptions): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const intervalMs = options.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  let last: string;
  for (;;) {
    try {
      const seen = await probe();
      if (seen === true) return;
      last = seen;
    } catch (error: unknown) {
      last = `probe failed: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (Date.now() >= deadline)
      throw new WaitTimeout(
        `timed out after ${timeoutMs} ms waiting for ${options.what}; last seen: ${last}`,
      );
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

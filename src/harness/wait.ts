// Waiting on conditions, never on fixed sleeps: poll a probe until it passes or the time is up,
// then fail with what was expected and what was last seen. The one `waitFor` of the repo (the
// harness exports it to users' suites; every test folder imports it from here).

export interface WaitOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** Pause between probes (default 50 ms). */
  intervalMs?: number;
  /** What we wait for, in words (the failure message starts with it). */
  what?: string;
}

/** What a probe returns while the condition does not hold yet: a description of what it sees. */
export class Pending {
  readonly seen: string;
  constructor(seen: string) {
    this.seen = seen;
  }
}

/** "Not yet; this is what I see" — the failure message quotes the last one. */
export function pending(seen: string): Pending {
  return new Pending(seen);
}

type NotYet = Pending | undefined | null | false;

/** A probe answers with a value (the wait resolves with it) or with something not-yet. */
export type Probe<T> = () => T | NotYet | Promise<T | NotYet>;

export class WaitTimeout extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WaitTimeout';
  }
}

/**
 * Polls `probe` until it answers with a value other than `undefined`, `null`, `false` or a
 * `Pending`, and resolves with that value. A probe that throws counts as not yet. After
 * `timeoutMs` it rejects with a `WaitTimeout` that names what was awaited and the last thing the
 * probe saw (or the last error it threw).
 */
export async function waitFor<T>(
  probe: Probe<T>,
  options: WaitOptions = {},
): Promise<Exclude<T, NotYet>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let last: string;
  for (;;) {
    try {
      const value = await probe();
      if (value instanceof Pending) last = value.seen;
      else if (value !== undefined && value !== null && value !== false)
        return value as Exclude<T, NotYet>;
      else last = String(value);
    } catch (error: unknown) {
      last = `probe failed: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (Date.now() >= deadline)
      throw new WaitTimeout(
        `timed out after ${timeoutMs} ms waiting for ${options.what ?? 'a condition'}; last seen: ${last}`,
      );
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(intervalMs, deadline - Date.now())),
    );
  }
}

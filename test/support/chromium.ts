// A real browser for the page's tests and benchmark: Debian's chromium (`apt-get install -y
// chromium`; .ci/run installs it), driven by playwright-core with its `executablePath` — no
// browser is ever downloaded. Each launch gets a fresh profile (--user-data-dir) that is removed
// on close. Where no Chromium is found, `findChromium` says why, for the skip message.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Where Debian puts it; CHROMIUM_PATH overrides. */
const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** The Chromium binary, or why there is none (printed when the browser tests are skipped). */
export function findChromium(): { path: string } | { reason: string } {
  for (const path of CANDIDATES)
    if (path !== undefined && path !== '' && existsSync(path)) return { path };
  return {
    reason:
      "no Chromium at /usr/bin/chromium (install Debian's: apt-get install -y chromium; or set CHROMIUM_PATH): the browser tests of the participation page are skipped",
  };
}

/** The flags of every launch: headless, no sandbox (root in CI), nothing that calls home. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** Launches Chromium with a fresh profile; `close` ends it and removes the profile. */
export async function launchChromium(
  executablePath: string,
  viewport = { width: 1280, height: 720 },
): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'cm-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport,
    args: CHROMIUM_ARGS,
    timeout: 60_000,
  });
  return {
    context,
    close: async () => {
      await context.close().catch(() => undefined);
      await rm(profile, { recursive: true, force: true });
    },
  };
}

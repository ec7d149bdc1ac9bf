// The /_emulator/ control routes refuse what a web page can make a browser send (issue 30's rule
// for every state-changing route of every server we ship; the same as the node's routes,
// src/localnet/http-router.ts, and the manager's RPC, src/manager/rpc/browser-guard.ts): a page
// on any site may POST to the emulator on localhost with a `text/plain` body and no preflight, or
// point an <img> at a GET. Before this guard, such a POST to /_emulator/faults/fail-next or
// /_emulator/tokens was obeyed.
import { beforeEach, describe, expect, it } from 'vitest';
import { startHarness } from './harness.ts';

let url: string;

// One emulator per test (startHarness stops it when the test ends): no fault leaks across.
beforeEach(async () => {
  url = (await startHarness({ kubelet: false })).emulator.url;
});

const failNext = JSON.stringify({ count: 1, code: 500 });

/** Whether the next API request fails (a fault took effect). */
async function faultArmed(): Promise<boolean> {
  return (await fetch(`${url}/api/v1/namespaces`)).status === 500;
}

describe('/_emulator/ browser guard', () => {
  it('refuses a cross-site POST (Origin) with 403 and does nothing', async () => {
    const response = await fetch(`${url}/_emulator/faults/fail-next`, {
      method: 'POST',
      headers: { Origin: 'https://evil.example', 'Content-Type': 'application/json' },
      body: failNext,
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ kind: 'Status', code: 403, reason: 'Forbidden' });
    expect(await faultArmed()).toBe(false);
  });

  it('refuses Sec-Fetch-Site cross-site and same-site with 403', async () => {
    for (const site of ['cross-site', 'same-site', 'same-origin']) {
      const response = await fetch(`${url}/_emulator/tokens`, {
        method: 'POST',
        headers: { 'Sec-Fetch-Site': site, 'Content-Type': 'application/json' },
        body: JSON.stringify({ namespace: 'default', serviceAccount: 'default' }),
      });
      expect(response.status, site).toBe(403);
    }
  });

  it('refuses a text/plain body (what a page sends without a preflight) with 415', async () => {
    const response = await fetch(`${url}/_emulator/faults/fail-next`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain;charset=UTF-8' },
      body: failNext,
    });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ code: 415, reason: 'UnsupportedMediaType' });
    expect(await faultArmed()).toBe(false);
  });

  it('refuses a GET of a state-changing route with 405 (an <img> can send it)', async () => {
    const response = await fetch(`${url}/_emulator/faults/fail-next`);
    expect(response.status).toBe(405);
    expect(await faultArmed()).toBe(false);
  });

  it('obeys our clients: JSON with no Origin, a POST with no body, GET of the request log', async () => {
    const armed = await fetch(`${url}/_emulator/faults/fail-next`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: failNext,
    });
    expect(armed.status).toBe(200);
    expect(await faultArmed()).toBe(true);
    expect((await fetch(`${url}/_emulator/faults/reset-watches`, { method: 'POST' })).status).toBe(
      200,
    );
    expect((await fetch(`${url}/_emulator/requests`)).status).toBe(200);
  });
});

// Writes docs/openapi.json: the control RPC's OpenAPI document, as the server itself builds it
// from the routes' schemas (`npm run docs:openapi`; `-- --check` exits 1 when the file is
// stale; test/rpc/docs.unit.test.ts checks it too).
import { EventEmitter } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import type { ManagerEvents } from '../src/manager/manager.ts';
import type { ControlPlane } from '../src/manager/rpc/control-plane.ts';
import { buildServer } from '../src/manager/rpc/server.ts';
import { VERSION } from '../src/manager/version.ts';

export const OPENAPI_DOC = 'docs/openapi.json';

/** Documentation needs the routes, never their answers: every call fails. */
function unreachable(): never {
  throw new Error('the OpenAPI document is built without a manager');
}
const noControl: ControlPlane = {
  chain: unreachable,
  readiness: unreachable,
  validators: unreachable,
  plan: unreachable,
  actions: unreachable,
  setPaused: unreachable,
  scale: unreachable,
  triggerView: unreachable,
  departure: unreachable,
  metrics: unreachable,
  events: new EventEmitter<ManagerEvents>(),
};

/** The document as the server serves it at GET /openapi.json, formatted for the repo. */
export async function renderOpenApi(): Promise<string> {
  const app = await buildServer({
    control: noControl,
    token: undefined,
    logger: pino({ level: 'silent' }),
    version: VERSION,
  });
  await app.ready();
  const text = `${JSON.stringify(app.swagger(), null, 2)}\n`;
  await app.close();
  return text;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = fileURLToPath(new URL(`../${OPENAPI_DOC}`, import.meta.url));
  const text = await renderOpenApi();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(path, 'utf8');
    } catch {
      // missing: stale
    }
    if (current !== text) {
      process.stderr.write(`${OPENAPI_DOC} is stale; run npm run docs:openapi\n`);
      process.exit(1);
    }
  } else {
    writeFileSync(path, text);
    process.stdout.write(`wrote ${OPENAPI_DOC}\n`);
  }
}

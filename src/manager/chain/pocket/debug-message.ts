// V1's way to trigger a view (`p1 Debug TriggerView`, app/client/cli/debug.go:189-270 at
// 58c9b650): a DebugMessage to each validator of the staked-actors address book, each applying it
// to itself. V1 sends it over libp2p; the stand-in takes the same message as JSON at
// `POST http://<service_url>/p2p/v1/debug-message`, the transport `localnet-cli` v1 mode uses.
import type { PocketRpcClient } from '../../../pocket/index.ts';
import { ManagerError } from '../../errors.ts';

export const TRIGGER_NEXT_VIEW = 'DEBUG_CONSENSUS_TRIGGER_NEXT_VIEW';

/** One message's time limit (a validator that does not answer does not hold the others up). */
const SEND_TIMEOUT_MS = 5_000;

/**
 * Sends `action` to every validator of the address book at once. Resolves when at least one took
 * it (as p1, a validator that cannot be reached is passed over); throws CHAIN_UNAVAILABLE naming
 * the failures when none did, or when the book is empty.
 */
export async function sendDebugMessage(
  rpc: Pick<PocketRpcClient, 'addressBook'>,
  action: string,
  signal: AbortSignal,
): Promise<{ sent: number; failed: string[] }> {
  const book = await rpc.addressBook({ actorType: 'validator' }, { signal });
  const urls = (book.actors ?? []).map((a) => a.service_url).filter((u) => u !== '');
  const failed: string[] = [];
  await Promise.all(
    urls.map(async (serviceUrl) => {
      try {
        const response = await fetch(`http://${serviceUrl}/p2p/v1/debug-message`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ action, type: 'DEBUG_MESSAGE_TYPE_BROADCAST' }),
          signal: AbortSignal.any([signal, AbortSignal.timeout(SEND_TIMEOUT_MS)]),
        });
        await response.arrayBuffer();
        if (response.status !== 200) failed.push(`${serviceUrl}: HTTP ${response.status}`);
      } catch (error: unknown) {
        if (signal.aborted) throw error;
        failed.push(`${serviceUrl}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }),
  );
  const sent = urls.length - failed.length;
  if (sent === 0)
    throw new ManagerError(
      'CHAIN_UNAVAILABLE',
      urls.length === 0
        ? 'no validator in the address book to send the debug message to'
        : `no validator took the debug message: ${failed.join('; ')}`,
    );
  return { sent, failed };
}

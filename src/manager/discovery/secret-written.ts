// When the keys Secret was last written, as far as its own record says: the latest `time` of its
// managedFields entries. The API server sets an entry's time when its manager adds a field,
// changes the value of one it owns, or removes one (the ManagedFieldsEntry `time` field's API
// documentation; apimachinery's fieldmanager), so no key in the Secret changed after that
// second. The key observations take this bound (keys/key-observations.ts): a key the manager
// sees for the first time at its start was in the Secret no later than its last write, not
// "just now" — otherwise every pod started in the manager's first second would look older than
// its key and be restarted (a scale from 4 to a thousand validators right after a start restarted 261 of them).
import type { V1Secret } from '@kubernetes/client-node';
import { kubeTimeMs } from './kube-time.ts';

/**
 * The last moment the Secret's data may have changed: the end of the second of its latest
 * managedFields time (Kubernetes writes whole seconds). A Secret not written since the second it
 * was created gives that second's start instead: its keys came with it, and no pod can have read
 * a key of it before it existed (a secret volume or `secretKeyRef` holds the container until the
 * Secret is there), so a pod that started in that second holds them — a devnet applies its
 * Secret and its StatefulSet together. Undefined when no entry carries a time (a server with
 * field management off, a keys file): the caller then knows nothing better than "now".
 */
export function secretWrittenBy(secret: V1Secret | undefined): number | undefined {
  let latest: number | undefined;
  for (const entry of secret?.metadata?.managedFields ?? []) {
    const ms = kubeTimeMs(entry.time);
    if (ms !== undefined && (latest === undefined || ms > latest)) latest = ms;
  }
  if (latest === undefined) return undefined;
  const SECOND_MS = 1000;
  const second = Math.floor(latest / SECOND_MS) * SECOND_MS;
  const created = kubeTimeMs(secret?.metadata?.creationTimestamp);
  if (created !== undefined && second <= Math.floor(created / SECOND_MS) * SECOND_MS) return second;
  return second + SECOND_MS - 1; // the second's last millisecond
}

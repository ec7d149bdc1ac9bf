// The keys Secret in the manager's terms (discovery/port.ts's KeySet): each entry's key text
// (the Secret's `data` is base64 of it), its resourceVersion, and when it was last written
// (secret-written.ts). The Kubernetes source hands the manager this, never the Secret.
import type { V1Secret } from '@kubernetes/client-node';
import type { KeySet } from './port.ts';
import { secretWrittenBy } from './secret-written.ts';

export function keySetOfSecret(secret: V1Secret): KeySet {
  const keys: Record<string, string> = {};
  for (const [name, encoded] of Object.entries(secret.data ?? {}))
    keys[name] = Buffer.from(encoded, 'base64').toString('utf8');
  return {
    keys,
    version: secret.metadata?.resourceVersion,
    writtenBy: secretWrittenBy(secret),
  };
}

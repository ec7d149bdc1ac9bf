// The RPC URL a `localnet-node run` started with `--rpc-port 0` (the OS picks the port) names in
// its start-up log line: how a test learns a child's port without choosing one beforehand.
import { waitFor } from '../../../src/harness/wait.ts';

export function rpcUrlFromLog(output: () => string, timeoutMs = 15_000): Promise<string> {
  return waitFor(
    () => {
      for (const line of output().split('\n')) {
        if (!line.startsWith('{') || !line.includes('"localnet node started"')) continue;
        const started = JSON.parse(line) as { rpcPort?: unknown };
        if (typeof started.rpcPort === 'number') return `http://127.0.0.1:${started.rpcPort}`;
      }
      return undefined;
    },
    { timeoutMs, what: 'the node’s start-up log line' },
  );
}

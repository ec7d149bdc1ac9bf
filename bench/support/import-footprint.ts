// Prints the resident memory of this process after importing the modules named on the command
// line (and two full garbage collections), as JSON. manager-memory.bench.ts runs it once per set
// of modules, in a fresh process with the image's Node options. `--lean` first registers the
// manager's lean client-node hook (ADR 0019), as the manager's entry point does.
// Usage: node --expose-gc bench/support/import-footprint.ts [--lean] <module>...
import { readFileSync } from 'node:fs';
import { registerLeanClientNode } from '../../src/manager/kube/lean-client-node.ts';

const args = process.argv.slice(2);
if (args.includes('--lean')) registerLeanClientNode();
for (const specifier of args.filter((a) => a !== '--lean')) await import(specifier);
const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
gc?.();
const kib = (field: string): number =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
process.stdout.write(
  `${JSON.stringify({ rssMiB: kib('VmRSS') / 1024, heapUsedMiB: process.memoryUsage().heapUsed / 2 ** 20 })}\n`,
);

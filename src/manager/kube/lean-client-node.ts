// Loads @kubernetes/client-node's `KubeConfig` without the generated classes of every Kubernetes
// API group: its `config.js` imports two small names from `gen/index.js`, which re-exports all of
// them (about 25 MiB of the manager's memory; ADR 0019). A module resolution hook, in the process's
// own thread, points that one import at client-node-configuration.ts. Register it before anything
// imports client-node; a process that also loads client-node's index gets the same modules.
import { registerHooks } from 'node:module';

const CONFIG_MODULE = '/@kubernetes/client-node/dist/config.js';
const CONFIGURATION = new URL('./client-node-configuration.ts', import.meta.url).href;

let registered = false;

/** Registers the hook once per process (the manager's entry point and the compile-cache warmer). */
export function registerLeanClientNode(): void {
  if (registered) return;
  registered = true;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      if (specifier === './gen/index.js' && context.parentURL?.endsWith(CONFIG_MODULE) === true)
        return { url: CONFIGURATION, shortCircuit: true };
      return nextResolve(specifier, context);
    },
  });
}

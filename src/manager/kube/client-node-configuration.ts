// What client-node's `config.js` imports from its `gen/index.js`, from the two small modules that
// define it: lean-client-node.ts points that import here so that `KubeConfig` loads without the
// classes of every API group (ADR 0019). The same modules, so the same functions and classes.
export { createConfiguration } from '@kubernetes/client-node/dist/gen/configuration.js';
export { ServerConfiguration } from '@kubernetes/client-node/dist/gen/servers.js';

// The service behind `cluster-manager run`: config read once (env and flags, every problem
// reported together), then the chain CM_CHAIN selects (chain/registry.ts), discovery
// (Kubernetes, or static files with no cluster at all), the manager and its control RPC; stop()
// shuts them down gracefully.
import type { ChainPort } from './chain/port.ts';
import { ConfigError, loadConfig, redactedConfig, type Config } from './config.ts';
import type { DiscoveryDeps, DiscoverySource } from './discovery/port.ts';
import { staticFileProblems } from './discovery/static-check.ts';
import { StaticDiscovery } from './discovery/static-source.ts';
import { HooksFileError, loadHooksFile, type HookDefinition } from './hooks/hooks-file.ts';
import { loadKubeClients, type KubeClients } from './kube/client.ts';
import { createLogger, type Logger } from './logger.ts';
import type { Manager } from './manager.ts';
import { chainPortOf, composeManager, controlPlaneOf, participationOf } from './compose.ts';
import { startControlServer } from './rpc/server.ts';
import { VERSION } from './version.ts';
import { catalogueCode } from './errors.ts';

export interface RunningService {
  manager: Manager;
  config: Config;
  logger: Logger;
  /** Stops everything; safe to call twice. */
  stop(): Promise<void>;
  /** URL of the control RPC once it listens. */
  rpcUrl: string | undefined;
  /**
   * Rejects with the error when the manager fails to start (its discovery, its journal…): the
   * process should then stop and exit non-zero, not stay up never ready. Never resolves otherwise.
   */
  failed: Promise<never>;
}

/** Starts the service from an environment and flags (tests call this in-process). */
export async function startService(options: {
  env: NodeJS.ProcessEnv;
  flags?: Record<string, string | undefined>;
}): Promise<RunningService> {
  const config = loadConfig({
    env: options.env,
    ...(options.flags === undefined ? {} : { flags: options.flags }),
  });
  let hooks: HookDefinition[] = [];
  try {
    if (config.hooksFile !== undefined) hooks = loadHooksFile(config.hooksFile);
  } catch (error: unknown) {
    // Reported like every other configuration problem (exit code 2, each problem named).
    if (error instanceof HooksFileError)
      throw new ConfigError(error.problems.map((p) => `CM_HOOKS_FILE ${config.hooksFile}: ${p}`));
    throw error;
  }
  const chain = chainPortOf(config);
  const source = discoveryOf(config, options.env, chain);
  const logger = createLogger({ level: config.logLevel });
  logger.info({ config: redactedConfig(config) }, 'configuration');
  for (const notice of config.deprecations) logger.warn(notice);
  if (hooks.length > 0)
    logger.info({ hooks: hooks.map((h) => `${h.on}:${h.name}:${h.failurePolicy}`) }, 'hooks');
  let manager: Manager;
  try {
    manager = composeManager({ config, logger, hooks, chain, ...source });
  } catch (error: unknown) {
    // A journal that cannot be opened, for one: said in the log as well as on stderr.
    logger.error({ err: error, code: catalogueCode(error) }, 'start failed');
    logger.flush();
    throw error;
  }
  const control = controlPlaneOf(manager);
  const server = await startControlServer(
    {
      control,
      token: config.rpcToken,
      logger,
      version: VERSION,
      participation: participationOf(manager),
      connections: {
        max: config.rpcMaxConnections,
        headersTimeoutMs: config.rpcHeadersTimeoutMs,
      },
    },
    { host: config.rpcHost, port: config.rpcPort },
  );
  logger.info({ url: server.url }, 'control RPC listening');
  let fail: (error: unknown) => void = () => undefined;
  const failed = new Promise<never>((_resolve, reject) => {
    fail = reject;
  });
  failed.catch(() => undefined); // a caller that does not watch it leaves no unhandled rejection
  const started = manager.start().catch((error: unknown) => {
    logger.error({ err: error }, 'start failed');
    fail(error);
  });
  let stopping: Promise<void> | undefined;
  return {
    manager,
    config,
    logger,
    rpcUrl: server.url,
    failed,
    stop: () => {
      stopping ??= (async () => {
        await server.close();
        await Promise.race([started, Promise.resolve()]);
        await manager.stop();
        logger.flush();
      })();
      return stopping;
    },
  };
}

/**
 * The discovery `run` uses: the cluster's (client-node, from the kubeconfig), or static files with
 * no Kubernetes client at all. Static files are checked here, so bad ones fail the start with
 * exit code 2 like any configuration problem.
 */
function discoveryOf(
  config: Config,
  env: NodeJS.ProcessEnv,
  chain: ChainPort,
): { kube: KubeClients } | { discovery: (deps: DiscoveryDeps) => DiscoverySource } {
  if (config.discovery === 'kubernetes')
    return { kube: loadKubeClients({ namespace: config.namespace, env }) };
  const files = { validatorsFile: config.validatorsFile ?? '', keysFile: config.keysFile ?? '' };
  const problems = staticFileProblems(files, chain.ids);
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    discovery: (deps) =>
      new StaticDiscovery({
        ...deps,
        ...files,
        probe: chain.nodeReady,
        probeIntervalMs: Math.max(config.chainPollIntervalMs, 500),
      }),
  };
}

// localnet-cli v1 mode: `Debug …` as p1 runs it. Its PersistentPreRunE loads the node config
// and genesis p1 needs for its P2P module (`CONFIG_PATH`, default
// build/config/config.validator1.json, app/client/cli/helpers/setup.go:28; `GENESIS_PATH`,
// default build/config/genesis.json, common.go:18) and fails with Go's `log.Fatalf` when they are
// missing (runtime/configs/config.go:62-70, runtime/manager.go:47-53). It then finds the
// validators through the RPC (the current height, then the address book: setup.go:57-63,
// p2p/providers/peerstore_provider/rpc/provider.go:63-92) and sends each one a `DebugMessage`
// (debug.go:189-270). V1 sends it over libp2p; the stand-in takes it as JSON on the same
// p2p port (`POST /p2p/v1/debug-message`): the one transport the stand-in cannot copy.
import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { extname } from 'node:path';
import { CobraError, exactArgs, maximumNArgs, type CommandDef, type RunContext } from './cobra.ts';
import type { P1Environment } from './p1-context.ts';
import { readDevnetEndpoints } from './devnet-file.ts';
import { scaleValidators } from './p1-debug.ts';
import { P1Error, request } from './p1-io.ts';
import { GoFatal, logFatal, zerologFatal, zerologLine } from './p1-v1-output.ts';

const DEFAULT_CONFIG = 'build/config/config.validator1.json';
const SCALABLE_ACTORS = ['fishermen', 'full_nodes', 'servicers', 'validators'];
const DEFAULT_GENESIS = 'build/config/genesis.json';
/** viper's SupportedExts (viper.go): a config file must have one of these extensions. */
const VIPER_EXTS = [
  'json',
  'toml',
  'yaml',
  'yml',
  'properties',
  'props',
  'prop',
  'hcl',
  'tfvars',
  'dotenv',
  'env',
  'ini',
];

export interface DebugContext {
  environment: P1Environment;
  /** The RPC URL: flag, env, the config file's `remote_cli_url`, default. */
  remote: (run: RunContext, config?: Record<string, unknown>) => string;
}

const errnoText = (error: unknown, path: string): string => {
  const code = (error as NodeJS.ErrnoException).code;
  const reason =
    code === 'ENOENT'
      ? 'no such file or directory'
      : code === 'EACCES'
        ? 'permission denied'
        : code === 'EISDIR'
          ? 'is a directory'
          : 'cannot read it';
  return `open ${path}: ${reason}`;
};

/** `configs.ParseConfig(path)` as far as p1 gets: read and parse, or Go's fatal line. */
export function loadConfig(path: string): Record<string, unknown> {
  if (path === '') return {}; // viper then searches its default folders and finds nothing: fine
  const ext = extname(path).slice(1);
  if (!VIPER_EXTS.includes(ext)) {
    throw logFatal(
      `[ERROR] fatal error reading config file Unsupported Config Type ${JSON.stringify(ext)}`,
    );
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error: unknown) {
    throw logFatal(`[ERROR] fatal error reading config file ${errnoText(error, path)}`);
  }
  if (ext !== 'json') return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch (error: unknown) {
    throw logFatal(
      `[ERROR] fatal error reading config file While parsing config: ${error instanceof Error ? error.message : 'invalid JSON'}`,
    );
  }
}

/** `parseGenesis` (runtime/genesis.go): read and unmarshal, or the runtime builder's fatal line. */
export function loadGenesis(path: string): void {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error: unknown) {
    throw logFatal(
      `[ERROR] Failed to initialize runtime builder: error reading genesis file ${path}: ${errnoText(error, path)}`,
    );
  }
  try {
    JSON.parse(text);
  } catch (error: unknown) {
    throw logFatal(
      `[ERROR] Failed to initialize runtime builder: ${error instanceof Error ? error.message : 'invalid JSON'}`,
    );
  }
}

/**
 * `p2p.Create` as p1's `setupAndStartP2PModule` runs it (app/client/cli/helpers/setup.go:90-95):
 * its debug lines (p2p/module.go:70, 291, 308), then the listen address from `p2p.hostname` and
 * `p2p.port` (module.go:106-112, 508-516), even in client debug mode. An empty hostname is looked
 * up and fails (`net.DefaultResolver.LookupHost("")`: "lookup : no such host";
 * p2p/utils/url_conversion.go:65-68, 128-147) and p1 exits 1 with the fatal line on stdout.
 * `POCKET_P2P_HOSTNAME` replaces the value only where the config names the key: viper's
 * `AutomaticEnv` reads a variable for a known key only (runtime/configs/config.go:53-58, "If the
 * key is not set in the config, the env var will not be used"), and the default config has no
 * hostname (runtime/configs/config.go:135-139). V1's cli-client sets it to 127.0.0.1
 * (build/localnet/manifests/cli-client.yaml:84-86). Returns the lines printed on the way.
 */
export async function createP2pModule(
  config: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const lines =
    zerologLine('debug', 'Creating P2P module') +
    zerologLine('debug', 'setupPeerstoreProvider', undefined, { module: 'p2p' }) +
    zerologLine('debug', 'loaded peerstore provider...', undefined, { module: 'p2p' });
  const p2p = viperSection(config, 'p2p');
  const configured = p2p === undefined ? undefined : viperKey(p2p, 'hostname');
  const fromEnv = env.POCKET_P2P_HOSTNAME ?? '';
  const hostname =
    configured !== undefined && fromEnv !== ''
      ? fromEnv
      : typeof configured === 'string'
        ? configured
        : '';
  const problem = await resolveProblem(hostname);
  if (problem === undefined) return lines;
  const wrapped = `parsing multiaddr from config: resolving peer IP for hostname: ${hostname}: resolving peer IP for hostname: ${hostname}, ${problem}`;
  throw new GoFatal({
    stdout: lines + zerologLine('fatal', 'Failed to create p2p module', wrapped),
  });
}

/** Why Go's resolver would not give `hostname` an address (`getPeerIP`), or undefined. */
async function resolveProblem(hostname: string): Promise<string | undefined> {
  if (hostname === '') return 'lookup : no such host';
  if (isIP(hostname) !== 0) return undefined;
  try {
    await lookup(hostname);
    return undefined;
  } catch {
    return `lookup ${hostname}: no such host`;
  }
}

/** A key of a viper config map: viper matches keys case-insensitively. */
function viperKey(map: Record<string, unknown>, key: string): unknown {
  const found = Object.keys(map).find((k) => k.toLowerCase() === key);
  return found === undefined ? undefined : map[found];
}

function viperSection(
  map: Record<string, unknown>,
  key: string,
): Record<string, unknown> | undefined {
  const value = viperKey(map, key);
  return typeof value === 'object' && value !== null
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The service URLs of the validators at the current height, read as p1's providers read them. */
async function validatorsToMessage(remote: string): Promise<string[]> {
  const fail = (error: string): never => {
    throw zerologFatal('Failed to start p2p module', error);
  };
  const json = async (path: string): Promise<unknown> => {
    try {
      const answer = await request('GET', `${remote}${path}`);
      if (answer.status !== 200) {
        return fail(
          `error retrieving addressbook via rpc. Unexpected status code: ${answer.status}`,
        );
      }
      return JSON.parse(answer.body) as unknown;
    } catch (error: unknown) {
      if (error instanceof P1Error) return fail(error.message);
      throw error;
    }
  };
  const state = (await json('/v1/consensus/state')) as { height?: unknown };
  const height = Number.isSafeInteger(state.height) ? (state.height as number) : 0;
  const book = (await json(
    `/v1/p2p/staked_actors_address_book?height=${height}&actor_type=validator`,
  )) as { actors?: { service_url?: unknown }[] | null };
  return (book.actors ?? [])
    .map((actor) => actor.service_url)
    .filter((url): url is string => typeof url === 'string' && url !== '');
}

/** Sends one `DebugMessage` to every validator; a failed send is logged, as p1 logs it. */
async function broadcastDebugMessage(
  environment: P1Environment,
  remote: string,
  action: string,
): Promise<void> {
  for (const serviceUrl of await validatorsToMessage(remote)) {
    try {
      const answer = await request('POST', `http://${serviceUrl}/p2p/v1/debug-message`, {
        body: { action, type: 'DEBUG_MESSAGE_TYPE_BROADCAST' },
      });
      if (answer.status !== 200) throw new P1Error(`HTTP ${answer.status}: ${answer.body.trim()}`);
    } catch (error: unknown) {
      if (!(error instanceof P1Error)) throw error;
      environment.output.out(
        zerologLine('error', 'Failed to broadcast debug message', error.message),
      );
    }
  }
}

export function v1DebugCommand(context: DebugContext): CommandDef {
  let config: Record<string, unknown> = {};
  const p2pDependencies = async (): Promise<void> => {
    const env = context.environment.env;
    config = loadConfig(env.CONFIG_PATH ?? DEFAULT_CONFIG);
    loadGenesis(env.GENESIS_PATH ?? DEFAULT_GENESIS);
    context.environment.output.out(await createP2pModule(config, env));
  };
  const fire = (
    def: { use: string; aliases: string[]; short: string; long: string },
    action: string,
  ): CommandDef => ({
    ...def,
    args: exactArgs(0),
    persistentPreRun: p2pDependencies,
    run: (run) => broadcastDebugMessage(context.environment, context.remote(run, config), action),
  });
  return {
    use: 'Debug',
    aliases: ['d'],
    short: 'Debug utility for rapid development',
    long: 'Debug utility to send fire-and-forget messages to the network for development purposes',
    args: maximumNArgs(1),
    children: [
      fire(
        {
          use: 'PrintNodeState',
          aliases: ['print', 'state'],
          short: 'Prints the node state',
          long: 'Sends a message to all visible nodes to log the current state of their consensus',
        },
        'DEBUG_CONSENSUS_PRINT_NODE_STATE',
      ),
      fire(
        {
          use: 'ResetToGenesis',
          aliases: ['reset', 'genesis'],
          short: 'Reset to genesis',
          long: 'Broadcast a message to all visible nodes to reset the state to genesis',
        },
        'DEBUG_CONSENSUS_RESET_TO_GENESIS',
      ),
      fire(
        {
          use: 'TriggerView',
          aliases: ['next', 'trigger', 'view'],
          short: 'Trigger the next view in consensus',
          long: 'Sends a message to all visible nodes on the network to start the next view (height/step/round) in consensus',
        },
        'DEBUG_CONSENSUS_TRIGGER_NEXT_VIEW',
      ),
      fire(
        {
          use: 'TogglePacemakerMode',
          aliases: ['toggle', 'pcm'],
          short: 'Toggle the pacemaker',
          long: 'Toggle the consensus pacemaker either on or off so the chain progresses on its own or loses liveness',
        },
        'DEBUG_CONSENSUS_TOGGLE_PACE_MAKER_MODE',
      ),
      {
        use: 'ScaleActor',
        aliases: ['scale'],
        short: 'Scales the number of actors up or down',
        long: 'Scales the type of actor specified to the number provided',
        args: exactArgs(2),
        persistentPreRun: p2pDependencies,
        // debug.go:124-134 edits Tilt's localnet_config.yaml; a localnet asks the cluster-manager.
        run: async ({ args }) => {
          const [actor, count] = args as [string, string];
          if (!SCALABLE_ACTORS.includes(actor)) throw zerologFatal('Invalid actor type provided');
          try {
            await scaleValidators(
              context.environment,
              actor,
              count,
              readDevnetEndpoints(undefined, context.environment.cwd ?? process.cwd()),
            );
          } catch (error: unknown) {
            if (error instanceof P1Error) throw new CobraError(error.message);
            throw error;
          }
        },
      },
    ],
  };
}

// `cluster-manager logs <validator|pod> [-f]`: a validator's node log, read through the
// Kubernetes API (`GET /api/v1/namespaces/{ns}/pods/{pod}/log`, the `pods/log` subresource
// kubectl logs uses), so it works on a real cluster as on the devnet. The validator's pod comes
// from the manager's status; the kubeconfig and namespace from the devnet or the flags.
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { InvalidArgumentError, type Command } from 'commander';
import { CliError, examples, ExitCode } from '../../cli/program.ts';
import type { ValidatorStatus } from '../status.ts';
import { clientOf, targetOf, type ServerTarget } from './server-target.ts';
import { idFormatOf } from '../id-format.ts';
import type { ChainSummary } from '../rpc/control-plane.ts';
import { PrettyLines, prettyText, type PrettyOptions } from './log-pretty.ts';

interface LogsFlags {
  follow?: boolean;
  tail?: number;
  previous?: boolean;
  timestamps?: boolean;
  container?: string;
  kubeconfig?: string;
  namespace?: string;
  pretty?: boolean;
}

function count(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 1_000_000)
    throw new InvalidArgumentError('--tail must be an integer from 0 to 1000000');
  return Number(value);
}

export function registerLogsCommand(program: Command): void {
  program
    .command('logs')
    .description(
      "Print a validator's node log (by id, e.g. 005, or pod name) through the Kubernetes API; -f follows it.",
    )
    .argument('<validator>', 'a validator id (005) or a pod name (validator-4)')
    .option('-f, --follow', 'keep printing new lines until Ctrl-C')
    .option('--tail <lines>', 'only the last lines', count)
    .option('-p, --previous', 'the log of the previous, terminated container')
    .option('--timestamps', 'prefix each line with its time')
    .option(
      '--pretty',
      'one readable line per JSON log line: time (UTC), level, message, then the fields',
    )
    .option('-c, --container <name>', 'the container (default: the pod has one)')
    .option(
      '--kubeconfig <file>',
      "kubeconfig (default: the devnet's, else KUBECONFIG or ~/.kube/config)",
    )
    .option(
      '-n, --namespace <ns>',
      "namespace (default: the devnet's, else the kubeconfig context's)",
    )
    .addHelpText(
      'after',
      examples([
        ['cluster-manager logs 005', "validator 005's node log"],
        ['cluster-manager logs 005 -f --tail 20', 'the last 20 lines, then follow'],
        ['cluster-manager logs 005 --pretty', 'readable lines instead of JSON'],
        ['cluster-manager logs validator-4 -n devnet', 'by pod name'],
      ]),
    )
    .action(async (validator: string, options: LogsFlags, command: Command) => {
      const target = await targetOf(command);
      const { KubeConfig } = await import('@kubernetes/client-node');
      const kc = new KubeConfig();
      const file = options.kubeconfig ?? target.devnet?.info.kubeconfig;
      try {
        if (file === undefined) kc.loadFromDefault();
        else kc.loadFromFile(file);
      } catch (error: unknown) {
        throw new CliError(
          `cannot load the kubeconfig ${file ?? '(default)'}: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      const namespace =
        options.namespace ??
        target.devnet?.info.namespace ??
        kc.getContextObject(kc.getCurrentContext())?.namespace ??
        'default';
      const { pod, gone } = await podOf(validator, target);
      // The manager said the validator has no pod (a scale-down removed it): said with the API's
      // "not found", with where a devnet keeps the log of a pod that is gone.
      let hint: string | undefined;
      if (gone !== undefined) {
        const file =
          target.devnet === undefined
            ? undefined
            : join(target.devnet.dir, 'emulator', 'logs', `${namespace}_${pod}.log`);
        const kept =
          file !== undefined &&
          (await access(file).then(
            () => true,
            () => false,
          ));
        hint = kept ? `${gone}; its node's last log is in ${file}` : gone;
      }
      await printLog(kc, { namespace, pod, ...options, hint });
    });
}

/**
 * The pod of a validator id (asked of the manager; by ordinal on a devnet) or a pod name, and why
 * it may be gone: the manager's word that the validator has no pod now. Whether the text is an id
 * is the manager's chain's to say (its id format, GET /v1/chain): `5` is `005` on one chain and
 * `val-5` on another. A manager that cannot be asked leaves a number to a devnet's ordinals.
 */
export async function podOf(
  validator: string,
  target: ServerTarget,
): Promise<{ pod: string; gone?: string }> {
  const client = clientOf(target, 10_000);
  let reason: string;
  try {
    const chain = await client.get<ChainSummary>('/v1/chain');
    if (chain.status !== 200) throw new Error(`the manager answered HTTP ${chain.status}`);
    const ids = idFormatOf(chain.body.ids);
    const id = ids.fromText(validator) ?? (ids.isId(validator) ? validator : undefined);
    if (id === undefined) return { pod: podName(validator, ids.example) };
    const answer = await client.get<{ validators: ValidatorStatus[] }>('/v1/validators');
    const row = answer.body.validators.find((v) => v.id === id);
    if (answer.status === 200 && row?.pod != null) return { pod: row.pod };
    reason =
      answer.status !== 200
        ? `the manager answered HTTP ${answer.status}`
        : row === undefined
          ? `the manager knows no validator ${id}`
          : `validator ${id} has no pod now`;
    return devnetPod(Number(/(\d+)$/.exec(id)?.[1]), validator, target, reason);
  } catch (error: unknown) {
    if (error instanceof CliError) throw error;
    reason = error instanceof Error ? error.message : String(error);
  }
  // The manager could not be asked: a number is an id only where ordinals say which pod it is.
  const number = /^\d+$/.test(validator) ? Number(validator) : undefined;
  if (number === undefined) return { pod: podName(validator, '5') };
  return devnetPod(number, validator, target, reason);
}

/** On a devnet the pod of id number N is <statefulSet>-(N-1), whatever the manager says. */
function devnetPod(
  number: number,
  validator: string,
  target: ServerTarget,
  reason: string,
): { pod: string; gone: string } {
  const devnet = target.devnet?.info;
  if (devnet !== undefined && Number.isInteger(number) && number >= 1)
    return { pod: `${devnet.statefulSet}-${number - 1}`, gone: reason };
  throw new CliError(
    `cannot tell the pod of validator ${validator} (${reason}); pass the pod name`,
  );
}

/** `text` as a pod name, or a usage error naming what an id looks like. */
function podName(text: string, exampleId: string): string {
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(text))
    throw new CliError(
      `${JSON.stringify(text)} is neither a validator id (${exampleId}) nor a pod name`,
      ExitCode.usage,
    );
  return text;
}

/** Colours only on a terminal that did not ask for none (https://no-color.org). */
function pretty(): PrettyOptions {
  return { color: process.stdout.isTTY && (process.env.NO_COLOR ?? '') === '' };
}

async function printLog(
  kc: import('@kubernetes/client-node').KubeConfig,
  options: LogsFlags & { namespace: string; pod: string; hint?: string | undefined },
): Promise<void> {
  const { ApiException, CoreV1Api, Log } = await import('@kubernetes/client-node');
  const core = kc.makeApiClient(CoreV1Api);
  const where = `pod ${options.pod} in namespace ${options.namespace}`;
  const explain = (error: unknown): CliError => {
    if (error instanceof ApiException) {
      const body = error.body as unknown;
      const message =
        typeof body === 'string'
          ? ((JSON.parse(body) as { message?: string } | null)?.message ?? body)
          : typeof (body as { message?: unknown } | null)?.message === 'string'
            ? (body as { message: string }).message
            : `HTTP ${error.code}`;
      const hint = error.code === 404 && options.hint !== undefined ? ` (${options.hint})` : '';
      return new CliError(
        `cannot read the log of ${where}: ${message.replace(/\s*\n\s*/g, ' ')}${hint}`,
      );
    }
    const reason =
      error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    return new CliError(`cannot read the log of ${where}: ${reason}`);
  };
  let container = options.container;
  try {
    // The container must be named when following (client-node sends `container=` always).
    container ??= (
      await core.readNamespacedPod({ name: options.pod, namespace: options.namespace })
    ).spec?.containers[0]?.name;
    if (options.follow !== true) {
      const text = await core.readNamespacedPodLog({
        name: options.pod,
        namespace: options.namespace,
        ...(container === undefined ? {} : { container }),
        ...(options.tail === undefined ? {} : { tailLines: options.tail }),
        ...(options.previous === true ? { previous: true } : {}),
        ...(options.timestamps === true ? { timestamps: true } : {}),
      });
      process.stdout.write(options.pretty === true ? prettyText(text, pretty()) : text);
      return;
    }
  } catch (error: unknown) {
    throw explain(error);
  }
  // Following: the body is streamed to stdout until the container stops or Ctrl-C.
  const sink = options.pretty === true ? new PrettyLines(pretty()) : new PassThrough();
  sink.on('data', (chunk: Buffer) => process.stdout.write(chunk));
  const ended = new Promise<void>((resolve) => sink.once('end', resolve));
  let controller: AbortController;
  try {
    controller = await new Log(kc).log(options.namespace, options.pod, container ?? '', sink, {
      follow: true,
      ...(options.tail === undefined ? {} : { tailLines: options.tail }),
      ...(options.previous === true ? { previous: true } : {}),
      ...(options.timestamps === true ? { timestamps: true } : {}),
    });
  } catch (error: unknown) {
    throw explain(error);
  }
  const stop = (): void => {
    controller.abort();
    sink.end();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await ended;
}

// `cluster-manager await-departure`: what a validator pod's preStop hook runs. It asks the manager
// (GET /v1/departures/{pod}, long-polled) whether the pod may go — its validator has left the
// active set, or the manager says it never will — and exits 0 then. It keeps asking while the
// manager is unreachable or not ready, until its own timeout (exit 3), so a pod whose validator
// is still leaving keeps its node running and voting. Contract: docs/cli.md, docs/control-rpc.md.
import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { CliError, examples, ExitCode, UsageError } from '../../cli/program.ts';
import { ControlClient, failOn } from './control-client.ts';

interface Departure {
  pod: string;
  validatorId: string | null;
  departed: boolean;
  final: boolean;
  code: string;
  reason: string;
  height: number;
}

/** Longest single long-poll; the manager allows 300 s. */
const POLL_SECONDS = 30;
/** Pause between tries while the manager cannot answer. */
const RETRY_MS = 1_000;
const POD_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function seconds(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 86_400)
    throw new InvalidArgumentError('--timeout must be a whole number of seconds from 1 to 86400');
  return Number(value);
}

export function registerAwaitDepartureCommand(program: Command): void {
  program
    .command('await-departure')
    .description(
      "Wait until this validator pod may go: its validator has left the active set, or the manager says it never will (run it as the pod's preStop hook). Exit 0 then, 3 when --timeout runs out first.",
    )
    .option('--pod <name>', 'the pod [env POD_NAME, then HOSTNAME]')
    .option('--timeout <seconds>', 'give up after this long (exit 3)', seconds, 600)
    .addHelpText(
      'after',
      examples([
        ['cluster-manager await-departure --timeout 540', "a pod's preStop hook (POD_NAME set)"],
        ['cluster-manager await-departure --pod validator-3', 'ask for one pod by hand'],
      ]) +
        '\nIn a StatefulSet container:\n  lifecycle:\n    preStop:\n      exec:\n        command: ["cluster-manager", "await-departure", "--timeout", "540"]\n  env: POD_NAME (fieldRef metadata.name), CLUSTER_MANAGER_URL, CLUSTER_MANAGER_TOKEN (from a Secret)',
    )
    .action(async (options: { pod?: string; timeout: number }, command: Command) => {
      const pod = options.pod ?? nonEmpty(process.env.POD_NAME) ?? nonEmpty(process.env.HOSTNAME);
      if (pod === undefined)
        throw new UsageError('no pod: pass --pod, or set POD_NAME (or HOSTNAME)');
      if (pod.length > 253 || !POD_NAME.test(pod))
        throw new UsageError(
          `--pod must be a pod name (a DNS-1123 subdomain), got ${JSON.stringify(pod.slice(0, 64))}`,
        );
      const globals = command.optsWithGlobals<{ server?: string; token?: string }>();
      const api = new ControlClient({
        server: globals.server ?? process.env.CLUSTER_MANAGER_URL ?? 'http://127.0.0.1:8080',
        token: globals.token ?? process.env.CLUSTER_MANAGER_TOKEN,
        timeoutMs: (POLL_SECONDS + 15) * 1000,
      });
      await awaitDeparture(api, pod, Date.now() + options.timeout * 1000);
    });
}

async function awaitDeparture(api: ControlClient, pod: string, deadline: number): Promise<void> {
  let shown = '';
  // The first question is answered at once (where things stand is printed); then long-polls.
  let first = true;
  const show = (line: string): void => {
    if (line === shown) return;
    shown = line;
    process.stdout.write(`${line}\n`);
  };
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0)
      throw new CliError(
        `timed out: ${pod} may not go yet (${shown === '' ? 'the manager never answered' : shown})`,
        ExitCode.timedOut,
      );
    const poll = first ? 0 : Math.max(1, Math.min(POLL_SECONDS, Math.floor(left / 1000)));
    let answer;
    try {
      answer = await api.get<Departure>(
        `/v1/departures/${encodeURIComponent(pod)}?timeoutSeconds=${poll}`,
      );
    } catch (error: unknown) {
      // Unreachable (a restart, a rollout of the manager): ask again until the timeout.
      show(
        `${pod}: the manager does not answer (${error instanceof Error ? error.message : String(error)}); retrying`,
      );
      await sleep(Math.min(RETRY_MS, Math.max(0, deadline - Date.now())));
      continue;
    }
    if (answer.status === 200) {
      first = false;
      const d = answer.body;
      const who = d.validatorId === null ? pod : `${pod} (${d.validatorId})`;
      // A reason that starts with its code already (the planner's BELOW_MINIMUM_SET, KEY_…) is
      // shown once: "BELOW_MINIMUM_SET: BELOW_MINIMUM_SET: …" read as two problems.
      const said = d.reason.startsWith(`${d.code}:`) ? d.reason : `${d.code}: ${d.reason}`;
      show(`${who}: ${said} (height ${d.height})`);
      if (d.final) return;
      continue;
    }
    if (answer.status >= 500 || answer.status === 429) {
      show(`${pod}: the manager is not ready (HTTP ${answer.status}); retrying`);
      await sleep(Math.min(RETRY_MS, Math.max(0, deadline - Date.now())));
      continue;
    }
    failOn(answer, 'await-departure'); // 401 (token), 400: retrying cannot help
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

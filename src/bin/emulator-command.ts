// `cluster-manager emulator`: the Kubernetes API emulator alone (wiring only; the logic is in
// src/kube-emulator/main.ts, which the manager's own code never imports).
import { Option, type Command } from 'commander';
import { examples, UsageError } from '../cli/program.ts';

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) throw new UsageError(`--port: not a port: ${value}`);
  return port;
}

export function registerEmulatorCommand(program: Command): void {
  program
    .command('emulator')
    .description('Run the Kubernetes API emulator alone; writes a kubeconfig for kubectl.')
    .option('--port <port>', 'TCP port on 127.0.0.1 (default: a free one)', parsePort)
    .addOption(
      new Option('--kubelet <mode>', 'how pods run')
        .choices(['simulated', 'process'])
        .default('simulated'),
    )
    .option(
      '--dir <dir>',
      'folder for the kubeconfig, pod folders and logs (default: a temp folder)',
    )
    .option(
      '--images <file>',
      'process mode: JSON image table {"<image>": {"command", "args", "env"}}',
    )
    .addHelpText(
      'after',
      examples([
        ['cluster-manager emulator', 'simulated pods; prints the kubeconfig path'],
        ['cluster-manager emulator --kubelet process --images images.json', 'pods as processes'],
      ]),
    )
    .action(
      async (options: {
        port?: number;
        kubelet: 'simulated' | 'process';
        dir?: string;
        images?: string;
      }) => {
        const { runEmulatorCommand } = await import('../kube-emulator/main.ts');
        await runEmulatorCommand({
          kubelet: options.kubelet,
          ...(options.port === undefined ? {} : { port: options.port }),
          ...(options.dir === undefined ? {} : { dir: options.dir }),
          ...(options.images === undefined ? {} : { imagesFile: options.images }),
          write: (line) => process.stdout.write(`${line}\n`),
        });
      },
    );
}

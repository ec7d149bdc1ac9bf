// `cluster-manager emulator`: runs the emulator alone until SIGINT/SIGTERM, with a kubeconfig
// written for kubectl and the server URL printed once it is ready.
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator, type Emulator } from './emulator.ts';
import type { ImageCommand } from './kubelets/images.ts';

export interface EmulatorCommandOptions {
  port?: number;
  kubelet: 'simulated' | 'process';
  /** Folder for the kubeconfig, pod folders and logs; a temp folder (removed on exit) if absent. */
  dir?: string;
  /** A JSON file `{ "<image>": { "command": …, "args": [...], "env": {...} } }` for process mode. */
  imagesFile?: string;
  /** Where the ready lines go. */
  write: (line: string) => void;
  /** Resolves when the emulator should stop (by default on SIGINT or SIGTERM). */
  stopSignal?: Promise<unknown>;
}

/**
 * The image table used when none is given: our stand-in node, run by this Node binary, with the
 * `cluster-manager` binary its image holds (the validators' preStop hook runs it).
 */
export function defaultImages(): Record<string, ImageCommand> {
  const node = fileURLToPath(new URL('../bin/localnet-node.ts', import.meta.url));
  const manager = fileURLToPath(new URL('../bin/cluster-manager.ts', import.meta.url));
  return {
    'localnet-node': {
      command: process.execPath,
      args: [node],
      binaries: { 'cluster-manager': { command: process.execPath, args: [manager] } },
    },
  };
}

async function loadImages(file: string | undefined): Promise<Record<string, ImageCommand>> {
  if (file === undefined) return defaultImages();
  const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`${file}: the image table must be a JSON object`);
  }
  return parsed as Record<string, ImageCommand>;
}

function signalled(): Promise<NodeJS.Signals> {
  return new Promise((resolveSignal) => {
    const handler = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
      resolveSignal(signal);
    };
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
  });
}

/** Runs the emulator until the stop signal; every child process is gone when it resolves. */
export async function runEmulatorCommand(options: EmulatorCommandOptions): Promise<void> {
  const stopSignal = options.stopSignal ?? signalled();
  const dir = options.dir === undefined ? undefined : resolve(options.dir);
  const emulator: Emulator = await startEmulator({
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(dir === undefined ? {} : { dir }),
    kubelet:
      options.kubelet === 'process'
        ? { mode: 'process', images: await loadImages(options.imagesFile) }
        : { mode: 'simulated', pendingMs: 500, readyMs: 1000, terminationMs: 1000 },
  });
  try {
    const kubeconfig = await emulator.writeKubeconfig(join(emulator.dir, 'kubeconfig'), {
      namespace: 'default',
    });
    options.write(`server: ${emulator.url}`);
    options.write(`kubeconfig: ${kubeconfig}`);
    options.write(`ready (kubectl --kubeconfig ${kubeconfig} get pods); stop with Ctrl-C`);
    await stopSignal;
  } finally {
    await emulator.stop();
  }
  options.write('stopped');
}

#!/usr/bin/env node
// Entry point of `cluster-manager`: runs the program of cluster-manager-program.ts. The lean
// client-node hook (ADR 0019) is registered before the program's modules are even resolved.
import { registerLeanClientNode } from '../manager/kube/lean-client-node.ts';

registerLeanClientNode();
const { runProgram } = await import('../cli/program.ts');
const { buildClusterManagerProgram } = await import('./cluster-manager-program.ts');
const { runFlagsNeeded } = await import('../manager/cli/run-command.ts');
// config.ts (and the TypeBox it is written in) only for a call that may use `run`'s flags: the
// core's settings and those of every chain registered by now (a module given to `node --import`
// may have registered one).
const settings = runFlagsNeeded(process.argv)
  ? (await import('../manager/config.ts')).allSettings()
  : [];
await runProgram(buildClusterManagerProgram(settings), process.argv);

#!/usr/bin/env node
// Entry point of `cluster-manager`: runs the program of cluster-manager-program.ts.
import { runProgram } from '../cli/program.ts';
import { buildClusterManagerProgram } from './cluster-manager-program.ts';

await runProgram(buildClusterManagerProgram(), process.argv);

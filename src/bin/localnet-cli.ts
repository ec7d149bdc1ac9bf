#!/usr/bin/env node
// Entry point of `localnet-cli`, the p1-compatible CLI subset (p1's output and exit codes).
import { runP1, stdinLines } from '../localnet/cli/p1-program.ts';

const code = await runP1(process.argv, {
  env: process.env,
  output: {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  },
  readLine: stdinLines(),
});
process.exit(code);

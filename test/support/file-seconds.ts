// Wall seconds per test file in the last whole run that was measured (docs/testing.md, "Timings"):
// only the order of the longest files matters (LongestFirstSequencer), so a file that is not listed
// is taken to be short. Update it from a JSON report: `npx node scripts/file-seconds.ts <report>`.
export const FILE_SECONDS: Readonly<Record<string, number>> = {
  'test/scenarios/scale-to-zero.test.ts': 558,
  'test/e2e/devnet-lifecycle.test.ts': 255,
  'test/scenarios/v1-devnet-cli.test.ts': 180,
  'test/integration/faults.test.ts': 167,
  'test/scenarios/seed-methodology.test.ts': 161,
  'test/integration/safety.test.ts': 129,
  'test/integration/manager.test.ts': 126,
  'test/property/control-plane-model.test.ts': 120,
  'test/cli/keys-tx-commands.test.ts': 116,
  'test/integration/leader-election.test.ts': 72,
  'test/localnet/localnet-cli-v1.test.ts': 63,
};

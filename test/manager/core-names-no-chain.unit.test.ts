// The manager's core names no chain (issue 32, docs/architecture.md §The chain port): every file
// of src/manager/ outside a chain's own folder (src/manager/chain/<chain>/) is read, and none may
// carry a transport of one chain as a type or a branch, Pocket V1's profile vocabulary (its units,
// its relay chains, its CLI, its view-trigger values, its profile names) or the literal 999 (Pocket
// V1's id range: a bound on validators is the chain's `IdFormatSpec`). What is left is listed in
// ALLOWED, each with its reason; an entry that no longer matches fails too, so the list shrinks.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const CORE = join(ROOT, 'src', 'manager');
/** A chain's own folder: src/manager/chain/<chain>/ (the port's files sit directly in chain/). */
const CHAIN_FOLDER = /^src\/manager\/chain\/[^/]+\//;

/** What the core must not say, each with why. */
const FORBIDDEN: readonly { readonly pattern: RegExp; readonly why: string }[] = [
  {
    pattern: /'rpc'\s*\|\s*'cli'|'cli'\s*\|\s*'rpc'/,
    why: "a chain's transports as a core type (a transport is TransportCapabilities)",
  },
  {
    pattern: /[=!]==?\s*'(?:rpc|cli)'|'(?:rpc|cli)'\s*[=!]==?/,
    why: 'a branch on a transport by name (branch on its capabilities)',
  },
  { pattern: /\b(?:rpc|cli) mode\b/i, why: "a chain's way of sending, named in the core" },
  { pattern: /CLI_TIMEOUT/, why: "a chain's error code (TransportCapabilities.maybeSentCodes)" },
  { pattern: /\bu?pokt\b/i, why: "Pocket's unit (a stake's denomination is the chain's)" },
  { pattern: /relay[ _-]?chains?|relayChains/i, why: "Pocket's stake field (StakeParams.fields)" },
  { pattern: /\bp1\b/, why: "Pocket's CLI" },
  {
    pattern: /rpc-debug-route|p2p-debug-message|debug-message|TriggerView\b/,
    why: "Pocket's ways of triggering a view (TransportCapabilities.viewTrigger)",
  },
  {
    pattern: /PocketProfile|INTENDED_CAPABILITIES|profile === /,
    why: "Pocket's profiles (ChainCapabilities is data)",
  },
  { pattern: /(?<![\d.])999(?![\d.])/, why: "Pocket's id range (the chain's IdFormatSpec)" },
];

/** What stays, by file and pattern, and why. */
const ALLOWED: readonly { readonly file: string; readonly text: string; readonly why: string }[] = [
  {
    file: 'src/manager/config.ts',
    text: "default: 'pokt.network/purpose=validator'",
    why: "CM_POD_SELECTOR's default: the label of the Helm chart the manager deploys beside (Pocket's LocalNet); a Kubernetes label of the deployment, not of the chain",
  },
];

function coreFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return coreFiles(path);
    const name = relative(ROOT, path).split('\\').join('/');
    return entry.name.endsWith('.ts') && !CHAIN_FOLDER.test(name) ? [name] : [];
  });
}

/** The lines of `file` that say what FORBIDDEN names, minus the allowed ones. */
function offences(file: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, index) => {
    for (const { pattern, why } of FORBIDDEN) {
      if (!pattern.test(line)) continue;
      if (ALLOWED.some((a) => a.file === file && line.includes(a.text))) continue;
      found.push(`${file}:${index + 1}: ${why}: ${line.trim()}`);
    }
  });
  return found;
}

describe("the manager's core names no chain", () => {
  const files = coreFiles(CORE);

  it('reads the core: the port and registry, the planner, reconciler, journal, CLI and routes', () => {
    for (const file of [
      'src/manager/chain/port.ts',
      'src/manager/chain/adapter.ts',
      'src/manager/planner/plan.ts',
      'src/manager/reconcile/reconciler.ts',
      'src/manager/journal/journal.ts',
      'src/manager/cli/logs-command.ts',
      'src/manager/rpc/routes/mutations.ts',
    ])
      expect(files).toContain(file);
    expect(files.filter((f) => f.startsWith('src/manager/chain/pocket/'))).toEqual([]);
  });

  it('has no transport type, no Pocket profile word and no 999 in any core file', () => {
    const found = files.flatMap((file) => offences(file, readFileSync(join(ROOT, file), 'utf8')));
    expect(found).toEqual([]);
  });

  it('keeps only allow-list entries that still match something', () => {
    for (const entry of ALLOWED)
      expect(readFileSync(join(ROOT, entry.file), 'utf8'), entry.why).toContain(entry.text);
  });

  it('catches each kind of word it is for (the patterns are not dead)', () => {
    const samples = [
      "readonly mode: 'rpc' | 'cli';",
      "if (adapter.mode === 'rpc') resend();",
      '// in CLI mode the node CLI signs',
      "failure.code === 'CLI_TIMEOUT'",
      "denomination: 'upokt'",
      '// its relay chains',
      '`p1 Debug TriggerView`',
      "viewTrigger: 'p2p-debug-message'",
      'maximum: 999,',
    ];
    for (const sample of samples) expect(offences('x.ts', sample), sample).not.toEqual([]);
    // Not Pocket's: ports, durations, versions and other numbers that merely contain the digits.
    for (const sample of ['port: 9999', 'timeoutMs: 1999', "'/v1/chain'", 'triggerView(signal)'])
      expect(offences('x.ts', sample), sample).toEqual([]);
  });
});

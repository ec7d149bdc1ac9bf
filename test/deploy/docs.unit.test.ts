// The user docs stay true to the code: the configuration reference is what `npm run docs:config`
// makes of SETTINGS, its examples are accepted by loadConfig, operations.md covers every phase,
// error code and metric, and links between docs resolve.
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CONFIGURATION_DOC,
  EXTRA_VARIABLES,
  renderConfigurationDoc,
} from '../../scripts/config-docs.ts';
import { BUILT_IN_CHAINS } from '../../src/manager/chain/registry.ts';
import { loadConfig, SETTINGS } from '../../src/manager/config.ts';
import { ErrorCatalogue, type ManagerErrorSpec } from '../../src/manager/errors.ts';
import { Metrics } from '../../src/manager/metrics.ts';
import { Annotations } from '../../src/manager/model.ts';
import { Phase } from '../../src/manager/planner/plan.ts';
import { readRepoFile, repoRoot } from './support/manifests.ts';

/** Docs that other parts write in parallel; links to them may not resolve on this branch yet. */
const PARALLEL_DOCS = new Set(['docs/control-rpc.md', 'docs/localnet-node.md']);
const USER_DOCS = [
  'docs/architecture.md',
  'docs/decision-rule.md',
  'docs/configuration.md',
  'docs/hooks.md',
  'docs/tilt.md',
  'docs/pocket-v1-localnet.md',
  'docs/operations.md',
  'docs/troubleshooting.md',
];

/** The core's settings and those of the built-in chains. */
const ALL_SETTINGS = [...SETTINGS, ...BUILT_IN_CHAINS.flatMap((chain) => chain.settings)];

/** The core's error codes and those the built-in chains declare. */
const ALL_ERRORS: readonly (readonly [string, ManagerErrorSpec])[] = [
  ...Object.entries(ErrorCatalogue),
  ...BUILT_IN_CHAINS.flatMap((chain) => chain.errors.map((e) => [e.code, e] as const)),
];

describe('docs/configuration.md', () => {
  it('is current: exactly what `npm run docs:config` makes of SETTINGS', () => {
    expect(readRepoFile(CONFIGURATION_DOC)).toBe(renderConfigurationDoc());
  });

  it('lists every setting, every extra variable and every older name', () => {
    const doc = readRepoFile(CONFIGURATION_DOC);
    for (const name of [...ALL_SETTINGS.map((s) => s.env), ...EXTRA_VARIABLES.map((v) => v.env)])
      expect(doc).toContain(`| \`${name}\` |`);
    for (const setting of ALL_SETTINGS)
      if (setting.alias !== undefined)
        expect(doc).toContain(
          `\`${setting.alias.env}\` (\`--${setting.alias.flag}\`) → \`${setting.env}\``,
        );
  });

  it('documents only extra variables that config.ts really reads', () => {
    const source = readRepoFile('src/manager/config.ts');
    for (const { env } of EXTRA_VARIABLES) expect(source).toContain(`env.${env}`);
  });

  it.each(ALL_SETTINGS.map((s) => [s.env]))(
    'shows an example of %s that loadConfig accepts',
    (env) => {
      const example = new RegExp(`\\| \`${env}=([^\`]*)\` \\|`).exec(
        readRepoFile(CONFIGURATION_DOC),
      )?.[1];
      expect(example).toBeDefined();
      const config = loadConfig({
        env: {
          CM_CHAIN_RPC_URL: 'http://pocket-validators:50832',
          CM_CLI_PATH: '/usr/local/bin/p1',
          [env]: example!.replaceAll('\\|', '|'),
        },
      });
      expect(config).toBeDefined();
    },
  );
});

describe('docs/operations.md', () => {
  const doc = readRepoFile('docs/operations.md');

  it.each(Object.values(Phase))('explains the phase %s', (phase) => {
    expect(doc).toContain(`| \`${phase}\` |`);
  });

  it.each(ALL_ERRORS)('explains the error code %s with its status', (code, spec) => {
    expect(doc).toContain(`| \`${code}\` | ${spec.status} | ${spec.retryable ? 'yes' : 'no'} |`);
  });

  it('describes every metric the manager exports', async () => {
    const names = (await new Metrics().registry.getMetricsAsJSON()).map((m) => m.name);
    expect(names.length).toBeGreaterThan(5);
    for (const name of names) expect(doc).toContain(`| \`${name}\` |`);
  });
});

describe('the user docs', () => {
  it('exist', () => {
    for (const doc of USER_DOCS) expect(existsSync(join(repoRoot, doc)), doc).toBe(true);
  });

  it.each(readdirSync(join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')))(
    'docs/%s links only to files that exist',
    (file) => {
      const text = readRepoFile(`docs/${file}`);
      const targets = [...text.matchAll(/\]\((?!https?:|#)([^)#\s]+)(#[^)]*)?\)/g)].map(
        (m) => m[1]!,
      );
      for (const target of targets) {
        const path = join('docs', target).replaceAll('\\', '/');
        const resolved = join(dirname(join(repoRoot, 'docs', file)), target);
        expect(existsSync(resolved) || PARALLEL_DOCS.has(path), `${file} → ${target}`).toBe(true);
      }
    },
  );

  it('draws the architecture: the deployment, the parts and ports, the data flow, a scale-up sequence and the readers in mermaid', () => {
    const doc = readRepoFile('docs/architecture.md');
    const diagrams = [...doc.matchAll(/```mermaid\n(\w+)/g)].map((m) => m[1]);
    expect(diagrams).toEqual([
      'flowchart',
      'flowchart',
      'flowchart',
      'sequenceDiagram',
      'flowchart',
    ]);
  });

  it("names the manager's annotations as model.ts spells them", () => {
    const all = USER_DOCS.map(readRepoFile).join('\n');
    for (const key of ['hold', 'draining', 'scaleTarget'] as const)
      expect(all).toContain(Annotations[key]);
  });
});

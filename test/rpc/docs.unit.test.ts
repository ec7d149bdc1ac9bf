// The control RPC, CLI and devnet docs stay true to the code: docs/openapi.json is what the
// server builds (`npm run docs:openapi`), and the readable docs name every route, event, error
// code, command and option there is.
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { OPENAPI_DOC, renderOpenApi } from '../../scripts/openapi-docs.ts';
import { ExitCode } from '../../src/cli/program.ts';
import { DEVNET_FILES } from '../../src/devnet/cleanup.ts';
import { registerDevnetCommand } from '../../src/devnet/command.ts';
import { LOCK_FILE } from '../../src/devnet/lock.ts';
import { registerAwaitDepartureCommand } from '../../src/manager/cli/await-departure.ts';
import { registerDebugCommands } from '../../src/manager/cli/debug-commands.ts';
import { BUILT_IN_CHAINS } from '../../src/manager/chain/registry.ts';
import { ErrorCatalogue, type ManagerErrorSpec } from '../../src/manager/errors.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

const program = new Command('cluster-manager');
registerDebugCommands(program);
registerAwaitDepartureCommand(program);
registerDevnetCommand(program);
const command = (name: string): Command => program.commands.find((c) => c.name() === name)!;
const DEBUG_COMMANDS = [
  'scale',
  'status',
  'plan',
  'actions',
  'pause',
  'resume',
  'trigger-view',
  'watch',
  'logs',
  'completion',
  'await-departure',
];

describe('docs/openapi.json', () => {
  it('is current: exactly what `npm run docs:openapi` writes', async () => {
    expect(read(OPENAPI_DOC)).toBe(await renderOpenApi());
  });
});

describe('docs/control-rpc.md', () => {
  const doc = read('docs/control-rpc.md');
  const openapi = JSON.parse(read(OPENAPI_DOC)) as {
    paths: Record<string, Record<string, unknown>>;
  };

  it('lists every route of the API', () => {
    for (const [path, methods] of Object.entries(openapi.paths))
      for (const method of Object.keys(methods))
        expect(doc).toMatch(
          new RegExp(`\`${method.toUpperCase()} ${path.replace(/[.?]/g, '\\$&')}[\`?]`),
        );
  });

  it('describes every event of the stream', () => {
    for (const event of ['hello', 'phase', 'action', 'height', 'paused'])
      expect(doc).toContain(`| \`${event}\` |`);
  });

  it('maps error codes of the catalogue to their own HTTP status', () => {
    const section = doc.slice(doc.indexOf('## Errors'), doc.indexOf('## Server-sent events'));
    const rows = [...section.matchAll(/^\| (\d{3}) \| (.*) \|$/gm)];
    expect(rows.length).toBeGreaterThan(8);
    for (const [, status, cell] of rows)
      for (const [, code] of cell!.matchAll(/`([A-Z_]+)`/g)) {
        const spec: ManagerErrorSpec | undefined =
          (ErrorCatalogue as Readonly<Record<string, ManagerErrorSpec | undefined>>)[code ?? ''] ??
          BUILT_IN_CHAINS.flatMap((chain) => chain.errors).find((e) => e.code === code);
        expect(spec, code).toBeDefined();
        expect(spec!.status, code).toBe(Number(status));
      }
  });
});

describe('docs/cli.md', () => {
  const doc = read('docs/cli.md');

  it.each(DEBUG_COMMANDS)('documents `%s` and each of its options', (name) => {
    expect(doc).toContain(`| \`${name}`);
    for (const option of command(name).options) expect(doc, option.long).toContain(option.long!);
  });

  it('documents the global flags, their env and every exit code', () => {
    for (const text of [
      '--server',
      '--token',
      '--devnet',
      'CLUSTER_MANAGER_URL',
      'CLUSTER_MANAGER_TOKEN',
    ])
      expect(doc).toContain(text);
    for (const code of [0, 1, 2, 3, 130, 143])
      expect(doc).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
  });

  it('has every exit code of the CLI in its table', () => {
    const table = doc.slice(doc.indexOf('## Exit codes'), doc.indexOf('## From localnet-cli'));
    for (const code of Object.values(ExitCode))
      expect(table).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
  });
});

describe('docs/devnet.md', () => {
  const doc = read('docs/devnet.md');

  it('documents every option of `cluster-manager devnet`', () => {
    for (const option of command('devnet').options)
      expect(doc, option.long).toContain(`\`${option.long!}`);
  });

  it('names the files the devnet writes', () => {
    for (const file of DEVNET_FILES.filter((f) => !/-(wal|shm)$/.test(f)))
      expect(doc).toContain(`<dir>/${file}`);
    expect(doc).toContain(`<dir>/${LOCK_FILE}`);
  });

  it('documents its subcommands', () => {
    for (const sub of command('devnet').commands)
      expect(doc).toContain(`cluster-manager devnet ${sub.name()}`);
  });
});

describe('links', () => {
  it.each(['docs/control-rpc.md', 'docs/cli.md', 'docs/devnet.md'])('of %s resolve', (file) => {
    const doc = read(file);
    for (const [, target] of doc.matchAll(/\]\(([^)#]+)(?:#[^)]*)?\)/g)) {
      if (target!.startsWith('http')) continue;
      expect(existsSync(join(root, dirname(file), target!)), target).toBe(true);
    }
  });
});

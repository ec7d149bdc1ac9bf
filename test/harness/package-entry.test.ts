// `cluster-manager/harness` as another project loads it (package.json "exports" → the plain
// JavaScript entry): the same values as the harness's index.ts; on a Node older than 24 — the
// machine's own Node, found on PATH outside node_modules — a clear error naming Node 24 instead of
// `Unknown file extension ".ts"`; and from a copy under node_modules (Node strips no types there)
// an error saying to depend on a link.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as index from '../../src/harness/index.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRY = join(ROOT, 'src/harness/package-entry.mjs');

/** The first `node` on PATH outside node_modules whose major version is below 24, if any. */
function olderNode(): { path: string; version: string } | undefined {
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    if (folder === '' || folder.includes('node_modules')) continue;
    const path = join(folder, 'node');
    const run = spawnSync(path, ['--version'], { encoding: 'utf8' });
    if (run.status !== 0) continue;
    const version = run.stdout.trim();
    if (Number(version.slice(1).split('.')[0]) < 24) return { path, version };
  }
  return undefined;
}

describe('the package entry of cluster-manager/harness', () => {
  it('exports the same values as the harness index', async () => {
    const entry = (await import(ENTRY)) as Record<string, unknown>;
    expect(Object.keys(entry).sort()).toEqual(Object.keys(index).sort());
    for (const name of Object.keys(index))
      expect(entry[name], name).toBe((index as Record<string, unknown>)[name]);
  });

  it('on a Node older than 24 fails naming Node 24, not a .ts extension', (context) => {
    const older = olderNode();
    if (older === undefined) {
      process.stderr.write('skipped: no node older than 24 on PATH outside node_modules\n');
      context.skip();
      return;
    }
    // Resolved by the package's own name, as a dependent project imports it.
    const run = spawnSync(
      older.path,
      ['--input-type=module', '-e', "await import('cluster-manager/harness')"],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      `cluster-manager/harness needs Node.js 24 or newer, and this is Node ${older.version}`,
    );
    expect(run.stderr).toContain('ERR_HARNESS_NODE_VERSION');
    expect(run.stderr).not.toContain('ERR_UNKNOWN_FILE_EXTENSION');
  });

  it('copied under node_modules, fails saying to depend on a link', () => {
    const project = mkdtempSync(join(tmpdir(), 'harness-copy-'));
    try {
      const copy = join(project, 'node_modules/cluster-manager/src/harness');
      cpSync(ENTRY, join(copy, 'package-entry.mjs'));
      const run = spawnSync(process.execPath, [join(copy, 'package-entry.mjs')], {
        encoding: 'utf8',
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('ERR_HARNESS_NOT_LINKED');
      expect(run.stderr).toContain('"cluster-manager": "file:<path to the clone>"');
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});

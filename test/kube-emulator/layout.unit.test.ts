// The emulator's layout (docs/kube-emulator.md, "Layout"; issue 32): its concerns are folders,
// at most 20 files sit at its top, no file imports itself through others, and the folders
// depend on each other in one direction only (the order the docs give).
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve('src/kube-emulator');

/** Every hand-written .ts file under the emulator (generated code excluded), absolute. */
function sources(): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.includes('/gen/'))
    .map((f) => join(root, f));
}

/** file → the files of ours it imports (static, dynamic, type-only alike). */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g)]
      .map((m) => resolve(dirname(file), m[1] ?? ''))
      .filter((target) => known.has(target));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** One cycle through the graph, as a list of nodes, or undefined (depth-first search). */
function findCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const done = new Set<string>();
  const path: string[] = [];
  const onPath = new Set<string>();
  const visit = (node: string): string[] | undefined => {
    if (onPath.has(node)) return [...path.slice(path.indexOf(node)), node];
    if (done.has(node)) return undefined;
    path.push(node);
    onPath.add(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle !== undefined) return cycle;
    }
    path.pop();
    onPath.delete(node);
    done.add(node);
    return undefined;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle !== undefined) return cycle;
  }
  return undefined;
}

describe('the emulator layout', () => {
  it('keeps at most 20 files at its top; the rest live in folders by concern', () => {
    const top = readdirSync(root, { withFileTypes: true }).filter((entry) => entry.isFile());
    expect(top.length).toBeLessThanOrEqual(20);
  });

  it('has no import circles between files', () => {
    const cycle = findCycle(importGraph(sources()));
    expect(cycle?.map((file) => relative(root, file))).toBeUndefined();
  });

  it('has no import circles between its folders (the top-level core aside)', () => {
    const folderOf = (file: string): string => relative(root, file).split('/')[0] ?? '';
    const files = sources();
    const folders = new Map<string, string[]>();
    for (const [file, targets] of importGraph(files)) {
      const from = folderOf(file);
      if (from.endsWith('.ts')) continue;
      const deps = folders.get(from) ?? [];
      for (const target of targets) {
        const to = folderOf(target);
        if (to !== from && !to.endsWith('.ts') && !deps.includes(to)) deps.push(to);
      }
      folders.set(from, deps);
    }
    expect(findCycle(folders)).toBeUndefined();
  });

  it('finds a circle when there is one (the check can fail)', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(findCycle(graph)).toEqual(['a', 'b', 'c', 'a']);
    expect(findCycle(new Map([['a', ['b']]]))).toBeUndefined();
  });
});

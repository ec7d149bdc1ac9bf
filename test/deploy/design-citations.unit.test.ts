// Every citation of the design resolves inside the repository (issue 32): the design is
// docs/design.md, and a section a source names — `docs/design.md §Parts` in code and text,
// `design.md#parts` in a markdown link — is a heading there. The design once lived outside the
// repository under an upper-case name a clone did not have; that name may not come back.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const DESIGN = 'docs/design.md';
/** The old, out-of-repo name, spelt so that this file does not cite it. */
const OUT_OF_REPO = ['DESIGN', 'md'].join('.');
const SELF = 'test/deploy/design-citations.unit.test.ts';

/** Where citations live: every tracked tree but the dependencies and generated code. */
const ROOTS = ['src', 'test', 'docs', 'scripts', 'bench', 'k8s', '.ci'];
const SKIP_DIRS = new Set(['node_modules', 'gen', '.git', '.devnet', 'coverage', 'images']);
const MAX_BYTES = 2_000_000;

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(repoRoot, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) out.push(...filesUnder(path));
    } else if (entry.isFile()) out.push(path);
  }
  return out;
}

function sourceFiles(): string[] {
  const top = readdirSync(repoRoot, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name !== 'package-lock.json')
    .map((e) => e.name);
  return [...top, ...ROOTS.filter((r) => existsSync(join(repoRoot, r))).flatMap(filesUnder)]
    .filter((f) => f !== SELF && statSync(join(repoRoot, f)).size <= MAX_BYTES)
    .sort();
}

/** The headings of a markdown text (levels 2 and 3), as written. */
function headingsOf(markdown: string): string[] {
  return [...markdown.matchAll(/^#{2,3} (.+)$/gm)].map((m) => m[1]!.trim());
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The heading that `rest` (the text after a `§`) starts with, whole words; undefined if none. */
function sectionAt(rest: string, headings: readonly string[]): string | undefined {
  return headings
    .filter((h) => rest.startsWith(h) && !/^[\p{L}\p{N}_]/u.test(rest.slice(h.length)))
    .sort((a, b) => b.length - a.length)[0];
}

/**
 * What is wrong with the design citations in one file's text: the old name, a `§Section` or
 * `#anchor` that is not a heading of the design, or a section named in quotes (write `§Section`).
 * In the design itself, a bare `§Section` must be one of its own headings too.
 */
function citationProblems(file: string, text: string, design: string): string[] {
  const headings = headingsOf(design);
  const anchors = new Set(headings.map(anchorOf));
  const problems: string[] = [];
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    const where = `${file}:${index + 1}`;
    if (line.includes(OUT_OF_REPO)) problems.push(`${where}: cites ${OUT_OF_REPO}; cite ${DESIGN}`);
    for (const m of line.matchAll(/(?<![\w./-])(?:docs\/)?design\.md/g)) {
      const after = line.slice(m.index + m[0].length);
      const section = /^\s*§(.*)$/.exec(after)?.[1];
      const anchor = /^#([\w-]+)/.exec(after)?.[1];
      if (section !== undefined && sectionAt(section, headings) === undefined)
        problems.push(`${where}: §${section.slice(0, 40)}… is not a heading of ${DESIGN}`);
      else if (anchor !== undefined && !anchors.has(anchor))
        problems.push(`${where}: #${anchor} is not a heading of ${DESIGN}`);
      else if (/^,?\s*["“']/.test(after))
        problems.push(`${where}: name the section as "${DESIGN} §Heading"`);
    }
    if (file === DESIGN)
      for (const m of line.matchAll(/(?<!design\.md )§(?=([^\s`].*))/g))
        if (sectionAt(m[1]!, headings) === undefined)
          problems.push(`${where}: §${m[1]!.slice(0, 40)}… is not a heading of ${DESIGN}`);
  });
  return problems;
}

describe('the design (docs/design.md)', () => {
  const design = readFileSync(join(repoRoot, DESIGN), 'utf8');

  it('holds the sections the code relies on', () => {
    expect(headingsOf(design)).toEqual(
      expect.arrayContaining([
        'Parts',
        'How data flows',
        'The rule that decides',
        'Safety rules',
        'The chain port',
        'Discovery',
        'Contracts',
      ]),
    );
  });

  it('is cited, and every citation in the repository resolves to one of its headings', () => {
    const texts = sourceFiles()
      .map((file) => ({ file, text: readFileSync(join(repoRoot, file), 'utf8') }))
      .filter(({ text }) => !text.includes('\0'));
    expect(texts.flatMap(({ file, text }) => citationProblems(file, text, design))).toEqual([]);
    expect(texts.filter(({ text }) => text.includes(DESIGN)).length).toBeGreaterThan(10);
  });

  it('is linked from the README and the architecture', () => {
    for (const [file, link] of [
      ['README.md', '(docs/design.md)'],
      ['docs/architecture.md', '(design.md)'],
    ] as const)
      expect(readFileSync(join(repoRoot, file), 'utf8'), file).toContain(link);
  });

  describe('the check itself', () => {
    const sample = '# t\n\n## Parts\n\n## The rule that decides\n';

    it('accepts a section that is a heading, whole words, and a link to its anchor', () => {
      expect(
        citationProblems(
          'a.ts',
          '// docs/design.md §Parts: x\n// (docs/design.md §The rule that decides)\n' +
            'see [it](design.md#the-rule-that-decides), docs/design.md alone',
          sample,
        ),
      ).toEqual([]);
    });

    it('refuses the old name, a section or anchor that is not there, and a quoted section', () => {
      const problems = citationProblems(
        'a.ts',
        [
          `// ${OUT_OF_REPO}, "Parts"`,
          '// docs/design.md §The rule',
          '// docs/design.md §Partsx',
          '[x](design.md#contracts)',
          '// docs/design.md, "Parts"',
        ].join('\n'),
        sample,
      );
      expect(problems.map((p) => p.split(':')[1])).toEqual(['1', '2', '3', '4', '5']);
    });

    it("checks the design's own § references", () => {
      expect(citationProblems(DESIGN, 'see §Parts and §Nowhere', sample)).toHaveLength(1);
    });
  });
});

// Writes test/support/file-seconds.ts, the order LongestFirstSequencer starts test files in on a
// fresh clone, from a vitest JSON report of a whole run:
//   npx vitest run --reporter=json --outputFile=run.json && npx node scripts/file-seconds.ts run.json
// Only files of at least MIN_SECONDS are listed; any other is taken to be short.
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

// 5 s: with two files at a time the order of the middling files decides how evenly the two end.
const MIN_SECONDS = 5;
const OUT = 'test/support/file-seconds.ts';

interface Report {
  startTime: number;
  testResults: { name: string; startTime: number; endTime: number }[];
}

const path = process.argv[2];
if (path === undefined) {
  process.stderr.write('usage: npx node scripts/file-seconds.ts <vitest JSON report>\n');
  process.exit(2);
}
const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
const rows = report.testResults
  .map(
    (r) => [relative(process.cwd(), r.name), Math.round((r.endTime - r.startTime) / 1000)] as const,
  )
  .filter(([, seconds]) => seconds >= MIN_SECONDS)
  .sort((a, b) => b[1] - a[1]);
const date = new Date(report.startTime).toISOString().slice(0, 10);
writeFileSync(
  OUT,
  `// Wall seconds per test file in the last whole run that was measured (${date}, written by
// scripts/file-seconds.ts from its JSON report): only the order of the longest files matters
// (LongestFirstSequencer), so a file under ${MIN_SECONDS} s is not listed and is taken to be short.
export const FILE_SECONDS: Readonly<Record<string, number>> = {
${rows.map(([file, seconds]) => `  '${file}': ${seconds},`).join('\n')}
};
`,
);
process.stdout.write(`${OUT}: ${rows.length} files of ${MIN_SECONDS} s or more\n`);

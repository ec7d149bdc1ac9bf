// `npm run bench`: runs every bench/*.bench.ts (or those named on the command line), prints a
// table, writes bench/results/latest.json and the table in docs/benchmarks.md.
import { readdir, mkdir, readFile, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchResult } from './bench-types.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv.slice(2);
const files = (await readdir(here))
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((name) => f.startsWith(name)))
  .sort();

const report: { file: string; results: BenchResult[]; error?: string }[] = [];
for (const file of files) {
  process.stderr.write(`bench: ${file}…\n`);
  try {
    const mod = (await import(new URL(file, import.meta.url).href)) as {
      run: () => Promise<BenchResult[]>;
    };
    report.push({ file, results: await mod.run() });
  } catch (error: unknown) {
    report.push({
      file,
      results: [],
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  }
}

const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const rows = report.flatMap(({ file, results, error }) =>
  error !== undefined
    ? [`| ${basename(file)} | failed: ${error.split('\n')[0] ?? ''} | | | | |`]
    : results.map(
        (r) =>
          `| ${r.name} | ${r.value} ${r.unit} | ${r.floor ? `${r.floor.name}: ${r.floor.value}` : '–'} | ${r.ratio ?? '–'} | ${r.notes ?? ''} |`,
      ),
);
const table = [
  '| figure | value | floor (same run) | ratio | notes |',
  '|---|---|---|---|---|',
  ...rows,
].join('\n');
process.stdout.write(`${table}\n`);

await mkdir(new URL('results/', import.meta.url), { recursive: true });
await writeFile(
  new URL('results/latest.json', import.meta.url),
  `${JSON.stringify({ date: new Date().toISOString(), machine, report }, null, 2)}\n`,
);

const docs = new URL('../docs/benchmarks.md', import.meta.url);
const start = '<!-- bench:start -->';
const end = '<!-- bench:end -->';
const current = await readFile(docs, 'utf8').catch(() => `# Benchmarks\n\n${start}\n${end}\n`);
if (only.length === 0 && current.includes(start) && current.includes(end)) {
  const block = `${start}\nLast run: ${new Date().toISOString().slice(0, 10)} on ${machine}.\n\n${table}\n${end}`;
  await writeFile(docs, current.replace(new RegExp(`${start}[\\s\\S]*${end}`), block));
}
if (report.some((r) => r.error !== undefined)) process.exitCode = 1;

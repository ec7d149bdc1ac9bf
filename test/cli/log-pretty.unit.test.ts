// `logs --pretty`: a pino JSON line as one readable line (time UTC, level, message, fields), the
// prefix of `--timestamps` kept, anything else passed as it is, lines cut across chunks joined.
import { describe, expect, it } from 'vitest';
import { PrettyLines, prettyLine, prettyText } from '../../src/manager/cli/log-pretty.ts';

const plain = { color: false };
// As the localnet node writes them (epoch ms) and as the manager does (ISO time, a name).
const NODE =
  '{"level":30,"time":1764755330123,"pid":4242,"hostname":"h","msg":"block committed","height":12,"round":0,"proposer":"003"}';
const MANAGER =
  '{"level":40,"time":"2026-12-03T09:48:50.456Z","pid":7,"name":"cluster-manager","validator":"007","code":"KEY_NOT_HEX","msg":"key \\"007\\" is malformed","err":{"type":"Error","message":"bad key","stack":"Error: bad key\\n at x"}}';

describe('prettyLine', () => {
  it('a node line: time, level, message, then its fields', () => {
    expect(prettyLine(NODE, plain)).toBe(
      '09:48:50.123 INFO  block committed height=12 round=0 proposer=003',
    );
  });

  it("a manager line: ISO time, the error's type and message, quoted where needed", () => {
    expect(prettyLine(MANAGER, plain)).toBe(
      '09:48:50.456 WARN  key "007" is malformed validator=007 code=KEY_NOT_HEX err="Error: bad key"',
    );
  });

  it("keeps kubectl's --timestamps prefix; passes text that is not a pino object as it is", () => {
    expect(prettyLine(`2026-12-03T09:48:50.123456789Z ${NODE}`, plain)).toBe(
      '2026-12-03T09:48:50.123456789Z 09:48:50.123 INFO  block committed height=12 round=0 proposer=003',
    );
    for (const line of ['listening on 127.0.0.1:1', '{not json', '[1,2]', '', 'null'])
      expect(prettyLine(line, plain)).toBe(line);
  });

  it('colours the level on a terminal only', () => {
    expect(prettyLine(NODE, { color: true })).toContain('\u001b[32mINFO \u001b[0m');
    expect(prettyLine(NODE, plain)).not.toContain('\u001b');
  });
});

describe('PrettyLines and prettyText', () => {
  it('join a line cut across chunks, and keep the text’s last newline', async () => {
    const stream = new PrettyLines(plain);
    const out: string[] = [];
    stream.on('data', (chunk: Buffer) => out.push(chunk.toString()));
    const done = new Promise((resolve) => stream.once('end', resolve));
    stream.write(NODE.slice(0, 20));
    stream.write(`${NODE.slice(20)}\nplain li`);
    stream.end('ne');
    await done;
    expect(out.join('')).toBe(
      '09:48:50.123 INFO  block committed height=12 round=0 proposer=003\nplain line',
    );
    expect(prettyText(`${NODE}\n${NODE}\n`, plain).split('\n')).toHaveLength(3);
    expect(prettyText(`${NODE}\n`, plain).endsWith('proposer=003\n')).toBe(true);
  });
});

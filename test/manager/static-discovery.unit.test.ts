// Static discovery in the unit layer: the validators file and the keys file parsed and refused
// by name, and the static source over an in-memory file system, a fake node probe and a manual
// clock — editing a file changes the desired state, a bad edit keeps the last good version and
// is reported, a keys file others may read is refused, readiness follows the probe.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { DiscoveryFileError } from '../../src/manager/discovery/discovery-file-error.ts';
import { checkKeysFileMode, parseKeysFile } from '../../src/manager/discovery/keys-file.ts';
import { StaticDiscovery, type StaticFiles } from '../../src/manager/discovery/static-source.ts';
import { parseValidatorsFile } from '../../src/manager/discovery/validators-file.ts';
import { KeyStore } from '../../src/manager/keys/key-store.ts';
import { Metrics } from '../../src/manager/metrics.ts';
import { generateKeys } from '../../src/pocket/index.ts';
import { ManualClock, flush } from '../support/manual-clock.ts';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';
import { pocketKeys } from '../../src/manager/chain/pocket/pocket-key.ts';
import type { KeySet } from '../../src/manager/discovery/port.ts';

const KEYS = generateKeys({ count: 4, seed: 'static-discovery' });
const hex = (id: string): string => {
  const key = KEYS.get(id);
  if (key === undefined) throw new Error(`no key ${id}`);
  return key.exportPrivateKeyHex();
};

function problemsOf(fn: () => unknown): { code: string; problems: readonly string[] } {
  try {
    fn();
  } catch (error: unknown) {
    if (error instanceof DiscoveryFileError) return { code: error.code, problems: error.problems };
    throw error;
  }
  throw new Error('expected a DiscoveryFileError');
}

describe('the validators file', () => {
  it('reads YAML and JSON, ids as "005" or 5, sorted, hold defaulting to false', () => {
    const yaml = `validators:
  - {id: "005", rpc: "http://127.0.0.1:4005/", serviceUrl: "127.0.0.1:5005"}
  - id: 2
    rpc: https://node-2.example:443
    serviceUrl: node-2.example:42069
    hold: true
`;
    expect(parseValidatorsFile('v.yaml', yaml, pocketIds)).toEqual([
      { id: '002', rpc: 'https://node-2.example', serviceUrl: 'node-2.example:42069', hold: true },
      { id: '005', rpc: 'http://127.0.0.1:4005', serviceUrl: '127.0.0.1:5005', hold: false },
    ]);
    const json = JSON.stringify({
      validators: [{ id: '001', rpc: 'http://[::1]:8080', serviceUrl: '[::1]:42069' }],
    });
    expect(parseValidatorsFile('v.json', json, pocketIds)).toEqual([
      { id: '001', rpc: 'http://[::1]:8080', serviceUrl: '[::1]:42069', hold: false },
    ]);
    expect(parseValidatorsFile('v.yaml', 'validators: []', pocketIds)).toEqual([]);
  });

  it('refuses an empty or cut-off file rather than reading it as "no validators"', () => {
    for (const text of ['', 'validators:', 'validators: null', '[]', 'validators: {}'])
      expect(problemsOf(() => parseValidatorsFile('v.yaml', text, pocketIds))).toEqual({
        code: 'VALIDATORS_FILE_INVALID',
        problems: ['expected an object with a "validators" list (write `validators: []` for none)'],
      });
    expect(
      problemsOf(() => parseValidatorsFile('v.yaml', 'validators: [ {id: "001"', pocketIds)).code,
    ).toBe('VALIDATORS_FILE_INVALID');
  });

  it('names every bad entry and field at once', () => {
    const text = `extra: 1
validators:
  - {id: "0", rpc: "http://a:1", serviceUrl: "a:2"}
  - {id: "1000", rpc: "ftp://a:1", serviceUrl: "a:3"}
  - {id: "003", rpc: "http://user:pw@a:1", serviceUrl: "http://a:4", hold: "yes", port: 3}
  - {id: "004", rpc: "http://b:1", serviceUrl: "b:70000"}
  - "005"
  - {id: "006", rpc: "http://c:1", serviceUrl: "c:1"}
  - {id: 6, rpc: "http://c:1", serviceUrl: "c:1"}
`;
    const { problems } = problemsOf(() => parseValidatorsFile('v.yaml', text, pocketIds));
    expect(problems).toEqual([
      'unknown top-level field "extra"',
      'validators[0]: "id" must be a validator id 1…999 ("005" or 5), got "0"',
      'validators[1]: "id" must be a validator id 1…999 ("005" or 5), got "1000"',
      'validators[1]: "rpc" must be the node\'s http(s)://host:port, without credentials, got "ftp://a:1"',
      'validators[2]: unknown field "port"',
      'validators[2] (003): "rpc" must be the node\'s http(s)://host:port, without credentials, got "http://***@a:1"',
      'validators[2] (003): "serviceUrl" must be host:port, got "http://a:4"',
      'validators[2] (003): "hold" must be true or false, got "yes"',
      'validators[3] (004): "serviceUrl" must be host:port, got "b:70000"',
      'validators[4]: expected an object',
      'validators[6] (006): id 006 is also that of validators[5]',
      'validators[6] (006): rpc http://c:1 is also that of validators[5]',
      'validators[6] (006): serviceUrl c:1 is also that of validators[5]',
    ]);
  });
});

describe('the keys file', () => {
  const decoded = (set: KeySet): Record<string, string> => ({ ...set.keys });

  it('reads a Secret manifest as `keys generate` writes it (stringData), and base64 data', () => {
    const manifest = `apiVersion: v1
kind: Secret
metadata:
  name: validators-private-keys
type: Opaque
data:
  "002": ${Buffer.from(hex('002')).toString('base64')}
  note: aGVsbG8=
stringData:
  "001": ${hex('001')}
`;
    expect(decoded(parseKeysFile('k.yaml', manifest, pocketIds))).toEqual({
      '001': hex('001'),
      '002': hex('002'),
      note: 'hello',
    });
  });

  it('reads a plain map of id to key, ids as YAML reads them (001 → 1)', () => {
    const map = `001: "${hex('001')}"\n"002": ${hex('002')}\n`;
    expect(decoded(parseKeysFile('k.yaml', map, pocketIds))).toEqual({
      '001': hex('001'),
      '002': hex('002'),
    });
  });

  it('refuses other names and non-string keys by name, never echoing a key', () => {
    const { code, problems } = problemsOf(() =>
      parseKeysFile('k.yaml', `validator-one: "${hex('001')}"\n"003": 12\n`, pocketIds),
    );
    expect(code).toBe('KEYS_FILE_INVALID');
    expect(problems).toEqual([
      '"validator-one" is not a validator id 1…999',
      'the key of 003 must be a string (quote it)',
    ]);
    const broken = problemsOf(() =>
      parseKeysFile('k.yaml', `"001": "${hex('001')}\n  - [`, pocketIds),
    );
    expect(broken).toEqual({ code: 'KEYS_FILE_INVALID', problems: ['not YAML or JSON'] });
    expect(JSON.stringify(broken)).not.toContain(hex('001').slice(0, 16));
  });

  it('refuses a file others may read or write, like ssh', () => {
    expect(() => checkKeysFileMode('k.yaml', 0o100600)).not.toThrow();
    expect(() => checkKeysFileMode('k.yaml', 0o100400)).not.toThrow();
    for (const mode of [0o100640, 0o100604, 0o100620, 0o100644, 0o100666])
      expect(problemsOf(() => checkKeysFileMode('k.yaml', mode))).toEqual({
        code: 'KEYS_FILE_INSECURE',
        problems: [
          `users other than its owner may read or write it (mode ${(mode & 0o777).toString(8)}); chmod 600 it`,
        ],
      });
  });
});

/** An in-memory disk: text and mode per path; a missing path rejects like ENOENT. */
class MemoryFiles implements StaticFiles {
  readonly files = new Map<string, { text: string; mode: number }>();
  reads = 0;
  write(path: string, text: string, mode = 0o100600): void {
    this.files.set(path, { text, mode });
  }
  chmod(path: string, mode: number): void {
    const file = this.files.get(path);
    if (file !== undefined) file.mode = mode;
  }
  read(path: string): Promise<string> {
    this.reads++;
    const file = this.files.get(path);
    return file === undefined
      ? Promise.reject(Object.assign(new Error('ENOENT'), { code: 'ENOENT' }))
      : Promise.resolve(file.text);
  }
  mode(path: string): Promise<number> {
    const file = this.files.get(path);
    return file === undefined
      ? Promise.reject(Object.assign(new Error('ENOENT'), { code: 'ENOENT' }))
      : Promise.resolve(file.mode);
  }
}

function validatorsYaml(ids: readonly string[]): string {
  return `validators:\n${ids
    .map(
      (id) => `  - {id: "${id}", rpc: "http://127.0.0.1:4${id}", serviceUrl: "127.0.0.1:5${id}"}`,
    )
    .join('\n')}\n`;
}

function setup(options: { validators?: string[]; keys?: string[] } = {}) {
  const clock = new ManualClock();
  const files = new MemoryFiles();
  files.write('/v.yaml', validatorsYaml(options.validators ?? ['001', '002']));
  files.write(
    '/k.yaml',
    (options.keys ?? ['001', '002']).map((id) => `"${id}": "${hex(id)}"`).join('\n'),
  );
  const down = new Set<string>();
  const probed: string[] = [];
  const metrics = new Metrics();
  const source = new StaticDiscovery({
    ids: pocketIds,
    clock,
    logger: pino({ level: 'silent' }),
    metrics,
    validatorsFile: '/v.yaml',
    keysFile: '/k.yaml',
    files,
    probe: (url) => {
      probed.push(url);
      return down.has(url) ? Promise.reject(new Error('connection refused')) : Promise.resolve();
    },
    watchIntervalMs: 1_000,
    probeIntervalMs: 1_000,
  });
  const seen = { desired: 0, keys: 0 };
  const listener = {
    desiredChanged: () => seen.desired++,
    desiredChangedNow: () => seen.desired++,
    keysChanged: () => seen.keys++,
  };
  const wanted = (): string[] =>
    [...source.computeDesired(clock.now()).validators.values()]
      .filter((v) => v.wanted)
      .map((v) => v.id);
  const ready = (): string[] =>
    [...source.computeDesired(clock.now()).validators.values()]
      .filter((v) => v.pod?.ready === true)
      .map((v) => v.id);
  const problemGauge = async (file: string): Promise<number | undefined> =>
    (await metrics.discoveryProblems.get()).values.find((v) => v.labels.file === file)?.value;
  return {
    clock,
    files,
    down,
    probed,
    source,
    listener,
    seen,
    wanted,
    ready,
    metrics,
    problemGauge,
  };
}

describe('the static source', () => {
  it('lists the file as wanted, with the node RPC and service URL, and is synced once both files are read', async () => {
    const t = setup();
    expect(t.source.synced).toBe(false);
    await t.source.start(t.listener);
    await flush();
    expect(t.source.synced).toBe(true);
    expect(t.source.layoutSynced).toBe(true);
    expect(t.wanted()).toEqual(['001', '002']);
    const entry = t.source.computeDesired(t.clock.now()).validators.get('002');
    expect(entry?.pod).toMatchObject({
      nodeRpcUrl: 'http://127.0.0.1:4002',
      serviceUrl: '127.0.0.1:5002',
      held: false,
      draining: false,
      terminating: false,
    });
    const keys = new KeyStore(pocketIds, pocketKeys);
    expect(keys.update(t.source.keys()).changed).toEqual(['001', '002']);
    expect(keys.get('001')).toMatchObject({ ok: true });
    expect(t.source.forcedMinimumSet()).toBeUndefined();
    await t.source.stop();
  });

  it('is ready while the node answers, since the first answer of the spell', async () => {
    const t = setup();
    t.down.add('http://127.0.0.1:4002');
    await t.source.start(t.listener);
    await flush();
    expect(t.ready()).toEqual(['001']);
    const since = t.source.computeDesired(t.clock.now()).validators.get('001')?.pod?.readySince;
    await t.clock.advance(3_000);
    expect(t.source.computeDesired(t.clock.now()).validators.get('001')?.pod?.readySince).toBe(
      since,
    );
    const before = t.seen.desired;
    t.down.delete('http://127.0.0.1:4002');
    await t.clock.advance(1_000);
    expect(t.ready()).toEqual(['001', '002']);
    expect(t.seen.desired).toBeGreaterThan(before);
    t.down.add('http://127.0.0.1:4001');
    await t.clock.advance(1_000);
    expect(t.ready()).toEqual(['002']);
    expect(
      t.source.computeDesired(t.clock.now()).validators.get('001')?.pod?.readySince,
    ).toBeUndefined();
    await t.source.stop();
  });

  it('follows edits: an added id is wanted, a removed one is not, and nothing changes for an unchanged file', async () => {
    const t = setup();
    await t.source.start(t.listener);
    await flush();
    const before = t.seen.desired;
    await t.clock.advance(1_000);
    expect(t.seen.desired).toBe(before); // read again, same text: no change reported
    t.files.write('/v.yaml', validatorsYaml(['001', '002', '003']));
    await t.clock.advance(1_000);
    expect(t.wanted()).toEqual(['001', '002', '003']);
    expect(t.seen.desired).toBeGreaterThan(before);
    t.files.write('/v.yaml', validatorsYaml(['001', '003']));
    await t.clock.advance(1_000);
    expect(t.wanted()).toEqual(['001', '003']);
    expect(t.source.status()[0]).toMatchObject({
      name: 'validators-file',
      synced: true,
      restarts: 2,
      lastError: undefined,
    });
    await t.source.stop();
  });

  it('keeps the last good validators file while an edit is half-written or invalid, reports it, and takes the fixed one', async () => {
    const t = setup();
    await t.source.start(t.listener);
    await flush();
    t.files.write('/v.yaml', 'validators:\n  - {id: "001", rpc: "http://127.0.0.1:4001", serv');
    await t.clock.advance(1_000);
    expect(t.wanted()).toEqual(['001', '002']);
    expect(t.source.status()[0]?.lastError).toMatch(/^VALIDATORS_FILE_INVALID: \/v\.yaml: /);
    expect(await t.problemGauge('validators-file')).toBe(1);
    t.files.write('/v.yaml', 'validators:'); // cut after the key: not "no validators"
    await t.clock.advance(1_000);
    expect(t.wanted()).toEqual(['001', '002']);
    expect(t.source.status()[0]?.lastError).toContain('write `validators: []` for none');
    t.files.files.delete('/v.yaml'); // removed (an editor's rename in progress)
    await t.clock.advance(1_000);
    expect(t.wanted()).toEqual(['001', '002']);
    expect(t.source.status()[0]?.lastError).toContain('cannot read it (ENOENT)');
    expect(t.source.keys()).toBeDefined(); // the keys go on working
    t.files.write('/v.yaml', validatorsYaml(['002']));
    await t.clock.advance(1_000);
    expect(t.wanted()).toEqual(['002']);
    expect(t.source.status()[0]?.lastError).toBeUndefined();
    expect(await t.problemGauge('validators-file')).toBe(0);
    await t.source.stop();
  });

  it('refuses a keys file others may read, keeping the last good keys, and takes it again once chmod 600', async () => {
    const t = setup();
    await t.source.start(t.listener);
    await flush();
    const good = t.source.keys();
    const keysBefore = t.seen.keys;
    t.files.write(
      '/k.yaml',
      ['001', '002', '003'].map((id) => `"${id}": "${hex(id)}"`).join('\n'),
      0o100644,
    );
    await t.clock.advance(1_000);
    expect(t.source.keys()).toBe(good);
    expect(t.seen.keys).toBe(keysBefore);
    expect(t.source.status()[1]).toMatchObject({
      name: 'keys-file',
      lastError:
        'KEYS_FILE_INSECURE: /k.yaml: users other than its owner may read or write it (mode 644); chmod 600 it',
    });
    expect(await t.problemGauge('keys-file')).toBe(1);
    expect(t.wanted()).toEqual(['001', '002']); // the validators file goes on working
    t.files.chmod('/k.yaml', 0o100600);
    await t.clock.advance(1_000);
    const keys = new KeyStore(pocketIds, pocketKeys);
    keys.update(t.source.keys());
    expect([...keys.entries()].map((e) => e.id)).toEqual(['001', '002', '003']);
    expect(t.seen.keys).toBe(keysBefore + 1);
    expect(t.source.status()[1]?.lastError).toBeUndefined();
    await t.source.stop();
  });

  it('hands a malformed key on to the KeyStore, which names it while the other keys work', async () => {
    const t = setup();
    t.files.write('/k.yaml', `"001": "${hex('001')}"\n"002": "not-a-key"\n`);
    await t.source.start(t.listener);
    await flush();
    const keys = new KeyStore(pocketIds, pocketKeys);
    const { newProblems } = keys.update(t.source.keys());
    expect(newProblems.map((p) => p.id)).toEqual(['002']);
    expect(keys.get('001')).toMatchObject({ ok: true });
    expect(JSON.stringify(newProblems)).not.toContain(hex('001').slice(0, 16));
    await t.source.stop();
  });

  it('starts without a usable file and becomes synced once the file is good', async () => {
    const t = setup();
    t.files.files.delete('/k.yaml');
    await t.source.start(t.listener);
    await flush();
    expect(t.source.layoutSynced).toBe(true);
    expect(t.source.synced).toBe(false);
    expect(t.source.status()[1]?.lastError).toMatch(/^KEYS_FILE_INVALID: .*ENOENT/);
    t.files.write('/k.yaml', `"001": "${hex('001')}"`);
    await t.clock.advance(1_000);
    expect(t.source.synced).toBe(true);
    await t.source.stop();
  });

  it('a hold in the file holds the validator; a node moved to another RPC is probed afresh', async () => {
    const t = setup({ validators: ['001'] });
    await t.source.start(t.listener);
    await flush();
    expect(t.ready()).toEqual(['001']);
    t.down.add('http://127.0.0.1:9999');
    t.files.write(
      '/v.yaml',
      'validators: [{id: "001", rpc: "http://127.0.0.1:9999", serviceUrl: "127.0.0.1:5001", hold: true}]',
    );
    await t.clock.advance(1_000);
    const entry = t.source.computeDesired(t.clock.now()).validators.get('001');
    expect(entry?.pod).toMatchObject({
      held: true,
      ready: false,
      nodeRpcUrl: 'http://127.0.0.1:9999',
    });
    await t.source.stop();
  });

  it('stops reading and probing once stopped', async () => {
    const t = setup();
    await t.source.start(t.listener);
    await flush();
    await t.source.stop();
    const reads = t.files.reads;
    const probes = t.probed.length;
    await t.clock.advance(10_000);
    expect(t.files.reads).toBe(reads);
    expect(t.probed.length).toBe(probes);
  });
});

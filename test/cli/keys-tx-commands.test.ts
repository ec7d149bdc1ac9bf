// The offline key and transaction tools, run as a user runs them.
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { admitTransaction, hexToBytes, parsePrivateKey } from '../../src/pocket/index.ts';
import { nobleSha3Hex } from '../support/noble-digests.ts';
import { KEY_005, KEY_VECTORS } from '../support/pocket-vectors.ts';
import { runBin } from '../support/run-bin.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cm-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('cluster-manager keys inspect', () => {
  it('prints the public key and address of a key read from standard input', async () => {
    const vector = KEY_VECTORS[2];
    const result = await runBin('cluster-manager', ['keys', 'inspect', '-'], {
      stdin: `${vector.privateKey}\n`,
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      publicKey: vector.publicKey,
      address: vector.address,
    });
  });

  it('reads a key from a file', async () => {
    const file = join(dir, 'key');
    await writeFile(file, KEY_VECTORS[0].privateKey, { mode: 0o600 });
    const result = await runBin('cluster-manager', ['keys', 'inspect', file]);
    expect(JSON.parse(result.stdout).address).toBe(KEY_VECTORS[0].address);
  });

  it('exits 2 with the named error and without echoing a malformed key', async () => {
    const bad = `${KEY_VECTORS[0].privateKey.slice(0, 120)}zz`;
    const result = await runBin('cluster-manager', ['keys', 'inspect', '-'], { stdin: bad });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: KEY_NOT_HEX: /);
    expect(result.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(result.stderr + result.stdout).not.toContain(bad.slice(0, 32));
  });

  it('refuses a key given on the command line', async () => {
    const result = await runBin('cluster-manager', ['keys', 'inspect', KEY_VECTORS[0].privateKey]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('standard input');
  });
});

describe('cluster-manager keys generate', () => {
  it('writes a Secret in LocalNet layout whose keys parse, deterministically with --seed', async () => {
    const first = await runBin('cluster-manager', [
      'keys',
      'generate',
      '--count',
      '3',
      '--seed',
      'test',
    ]);
    const second = await runBin('cluster-manager', [
      'keys',
      'generate',
      '--count',
      '3',
      '--seed',
      'test',
    ]);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(second.stdout);
    const secret = parse(first.stdout) as {
      kind: string;
      metadata: { name: string };
      stringData: Record<string, string>;
    };
    expect(secret.kind).toBe('Secret');
    expect(secret.metadata.name).toBe('validators-private-keys');
    expect(Object.keys(secret.stringData)).toEqual(['001', '002', '003']);
    for (const [id, value] of Object.entries(secret.stringData)) {
      const key = parsePrivateKey(value);
      expect(first.stdout).toContain(`"${id}": ${value} # ${key.address} (${key.publicKeyHex})`);
    }
  });

  it('differs without a seed and writes a private file with --out', async () => {
    const out = join(dir, 'secret.yaml');
    const result = await runBin('cluster-manager', [
      'keys',
      'generate',
      '--count',
      '1',
      '--out',
      out,
      '--name',
      'k',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    const other = await runBin('cluster-manager', [
      'keys',
      'generate',
      '--count',
      '1',
      '--name',
      'k',
    ]);
    expect(other.stdout).not.toBe(await readFile(out, 'utf8'));
  });

  it('--out over an existing file readable by others leaves a private file (mode 0600), not its old mode', async () => {
    const out = join(dir, 'shared.yaml');
    await writeFile(out, 'old\n', { mode: 0o644 });
    const result = await runBin('cluster-manager', [
      'keys',
      'generate',
      '--count',
      '2',
      '--out',
      out,
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    expect(await readFile(out, 'utf8')).toContain('"002":');
  });

  it('rejects a count outside 1-999 with exit 2', async () => {
    for (const count of ['0', '1000', 'x', '1.5']) {
      const result = await runBin('cluster-manager', ['keys', 'generate', '--count', count]);
      expect(result.code).toBe(2);
    }
  });
});

describe('cluster-manager tx build and decode', () => {
  it('builds a stake that the chain would admit and decodes it back', async () => {
    const build = await runBin(
      'cluster-manager',
      [
        'tx',
        'build',
        'stake',
        '--key',
        '-',
        '--service-url',
        'v5:42069',
        '--amount',
        '15100000000',
        '--nonce',
        '77',
      ],
      { stdin: KEY_005.privateKey },
    );
    expect(build.code).toBe(0);
    const hex = build.stdout.trim();
    const admitted = admitTransaction(hexToBytes(hex));
    expect(admitted.signerAddress).toBe(KEY_005.address);
    expect(admitted.message.type).toBe('MessageStake');

    const decode = await runBin('cluster-manager', ['tx', 'decode', '-'], { stdin: `${hex}\n` });
    expect(decode.code).toBe(0);
    expect(JSON.parse(decode.stdout)).toMatchObject({
      type: 'MessageStake',
      message: {
        amount: '15100000000',
        service_url: 'v5:42069',
        chains: ['0001'],
        output_address: KEY_005.address,
      },
      nonce: '77',
      signer: KEY_005.address,
      signatureValid: true,
      hash: nobleSha3Hex(hexToBytes(hex)),
    });
  });

  it('builds an unstake', async () => {
    const build = await runBin('cluster-manager', ['tx', 'build', 'unstake', '--key', '-'], {
      stdin: KEY_005.privateKey,
    });
    const decode = await runBin('cluster-manager', ['tx', 'decode', build.stdout.trim()]);
    expect(JSON.parse(decode.stdout)).toMatchObject({
      type: 'MessageUnstake',
      message: { address: KEY_005.address },
    });
  });

  it('exits 2 on bad usage with one line', async () => {
    const cases = [
      {
        args: ['tx', 'build', 'stake', '--key', '-'],
        stdin: KEY_005.privateKey,
        match: /--service-url/,
      },
      {
        args: ['tx', 'build', 'bond', '--key', '-'],
        stdin: KEY_005.privateKey,
        match: /stake or unstake/,
      },
      {
        args: ['tx', 'build', 'unstake', '--key', '-', '--nonce', '-1'],
        stdin: KEY_005.privateKey,
        match: /--nonce/,
      },
      // A key on the command line is refused first, whatever else is wrong (no --service-url).
      {
        args: ['tx', 'build', 'stake', '--key', KEY_005.privateKey],
        stdin: '',
        match: /not on the command line/,
      },
      // A malformed key too, before the stake's own checks.
      {
        args: ['tx', 'build', 'stake', '--key', '-'],
        stdin: 'zz'.repeat(64),
        match: /KEY_NOT_HEX/,
      },
      { args: ['tx', 'decode', 'xyz'], stdin: '', match: /hex digits/ },
      { args: ['tx', 'decode', '0aff'], stdin: '', match: /CODE: 26/ },
      { args: ['tx', 'frobnicate'], stdin: '', match: /unknown command/ },
    ];
    for (const { args, stdin, match } of cases) {
      const result = await runBin('cluster-manager', args, { stdin });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(match);
      expect(result.stderr + result.stdout).not.toContain(KEY_005.privateKey.slice(0, 32));
    }
  });

  it('gives --help for every command with exit 0', async () => {
    for (const args of [
      [],
      ['keys'],
      ['keys', 'inspect'],
      ['keys', 'generate'],
      ['tx'],
      ['tx', 'build'],
      ['tx', 'decode'],
    ]) {
      const result = await runBin('cluster-manager', [...args, '--help']);
      expect(result.code, args.join(' ')).toBe(0);
      expect(result.stdout).toMatch(/^Usage: cluster-manager/);
    }
  });
});

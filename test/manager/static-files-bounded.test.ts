// Static discovery reads only what is safe to read (found by trying main as an attacker): a FIFO
// at the validators file's path froze discovery until someone wrote into it, and /dev/zero or a
// 50 MB file took the manager to 1.7 GB and stalled its event loop. Now each is a named problem.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  MAX_FILE_BYTES,
  readBoundedFile,
  readBoundedFileSync,
} from '../../src/manager/discovery/bounded-file.ts';
import { staticFileProblems } from '../../src/manager/discovery/static-check.ts';
import { pocketIds } from '../../src/manager/chain/pocket/id-format.ts';

const dir = mkdtempSync(join(tmpdir(), 'cm-bounded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('reading static discovery files', () => {
  it('reads a regular file, also through a symlink', async () => {
    const file = join(dir, 'ok.yaml');
    writeFileSync(file, 'validators: []\n');
    symlinkSync(file, join(dir, 'link.yaml'));
    expect(await readBoundedFile(join(dir, 'link.yaml'))).toBe('validators: []\n');
    expect(readBoundedFileSync(file)).toBe('validators: []\n');
  });

  it('refuses a FIFO at once instead of waiting for a writer', async () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    await expect(readBoundedFile(fifo)).rejects.toMatchObject({ code: 'not a regular file' });
    expect(() => readBoundedFileSync(fifo)).toThrow(/not a regular file/);
  });

  it('refuses a device and a file over the limit, without reading them', async () => {
    await expect(readBoundedFile('/dev/zero')).rejects.toMatchObject({
      code: 'not a regular file',
    });
    const big = join(dir, 'big.yaml');
    writeFileSync(big, `validators: []\n${'#'.repeat(MAX_FILE_BYTES)}\n`);
    await expect(readBoundedFile(big)).rejects.toThrow(/limit/);
  });

  it('names each problem at start (exit code 2), the keys directory as not a regular file', () => {
    const keysDir = join(dir, 'keys.d');
    mkdirSync(keysDir);
    chmodSync(keysDir, 0o755);
    const problems = staticFileProblems(
      { validatorsFile: '/dev/zero', keysFile: keysDir },
      pocketIds,
    );
    expect(problems).toEqual([
      expect.stringMatching(
        /^CM_VALIDATORS_FILE \/dev\/zero: VALIDATORS_FILE_INVALID: cannot read it \(not a regular file\)/,
      ),
      expect.stringMatching(/^CM_KEYS_FILE .*keys\.d: KEYS_FILE_INVALID: .*not a regular file/),
    ]);
  });
});

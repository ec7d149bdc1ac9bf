// The CLI adapter's one-line failure reason from what p1 prints (app/client/main.go:21-23, cobra
// v1.6.0 ExecuteC): cobra's `Error:` line before the usage, Go's `log.Fatal` line, or the fatal
// JSON line of p1's logger on stdout; never key material.
import { describe, expect, it } from 'vitest';
import { failureReason } from '../../src/manager/chain/pocket/cli-adapter.ts';

const USAGE = `Usage:\n  p1 Validator Stake <fromAddr> <amount> <relayChainIDs> <serviceURI> [flags]\n\nFlags:\n  -h, --help   help for Stake\n${'      --pad string   padding\n'.repeat(20)}\nGlobal Flags:\n      --verbose   Show verbose output\n`;

describe('failureReason', () => {
  it('takes cobra’s Error line, not the usage printed after it', () => {
    const stdout =
      '{"level":"fatal","error":"accepts 4 arg(s), received 3","time":"2023-11-29T12:00:00Z","message":"failed to execute command"}\n';
    expect(failureReason(stdout, `Error: accepts 4 arg(s), received 3\n${USAGE}\n`)).toBe(
      'accepts 4 arg(s), received 3',
    );
  });

  it('takes Go’s log.Fatal line without its timestamp', () => {
    expect(
      failureReason(
        '',
        '2023/11/29 12:00:00 [ERROR] fatal error reading config file open build/config/config.validator1.json: no such file or directory\n',
      ),
    ).toBe(
      '[ERROR] fatal error reading config file open build/config/config.validator1.json: no such file or directory',
    );
  });

  it('takes the message and error of p1’s fatal log line on stdout', () => {
    expect(
      failureReason(
        'Enter Passphrase: \n{"level":"fatal","error":"inappropriate ioctl for device","time":"2023-11-29T12:00:00Z","message":"failed to read password"}\n',
        '',
      ),
    ).toBe('failed to read password: inappropriate ioctl for device');
  });

  it('falls back to the first line, scrubs long hex and stays short', () => {
    const key = 'ab'.repeat(64);
    expect(failureReason('', `panic: bad key ${key}\ngoroutine 1 [running]:\n`)).toBe(
      'panic: bad key [redacted]',
    );
    expect(failureReason('', `Error: ${'x'.repeat(1000)}\n`)).toHaveLength(400);
    expect(failureReason('', '')).toBe('(no output)');
  });
});

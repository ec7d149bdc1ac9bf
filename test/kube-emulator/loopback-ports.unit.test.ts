// The ports a devnet's pods listen on are chosen outside the kernel's ephemeral range
// (src/kube-emulator/kubelets/loopback-ports.ts): the pure parts, the range and the candidates.
import { describe, expect, it } from 'vitest';
import {
  candidateRanges,
  ephemeralRange,
} from '../../src/kube-emulator/kubelets/loopback-ports.ts';

describe('ephemeralRange', () => {
  it('reads /proc/sys/net/ipv4/ip_local_port_range (two numbers, tab-separated)', () => {
    expect(ephemeralRange(() => '32768\t60999\n')).toEqual([32_768, 60_999]);
    expect(ephemeralRange(() => '1024 65535')).toEqual([1024, 65_535]);
  });

  it("falls back to Linux's default when the file is missing or garbled", () => {
    const missing = (): string => {
      throw new Error('ENOENT');
    };
    for (const read of [missing, () => '', () => 'a b', () => '60999 32768']) {
      expect(ephemeralRange(read)).toEqual([32_768, 60_999]);
    }
  });
});

describe('candidateRanges', () => {
  it('keeps ports from 10000 up, below and above the ephemeral range', () => {
    expect(candidateRanges([32_768, 60_999])).toEqual([
      [10_000, 32_767],
      [61_000, 65_535],
    ]);
  });

  it('is empty when the ephemeral range covers every candidate (then port 0 is the fallback)', () => {
    expect(candidateRanges([1024, 65_535])).toEqual([]);
    expect(candidateRanges([9000, 65_535])).toEqual([]);
  });

  it('never offers a port inside the range, at its edges either', () => {
    for (const range of [
      [10_001, 65_534],
      [49_152, 65_535],
      [20_000, 20_000],
    ] as [number, number][]) {
      for (const [from, to] of candidateRanges(range)) {
        expect(from).toBeGreaterThanOrEqual(10_000);
        expect(to).toBeLessThanOrEqual(65_535);
        expect(to < range[0] || from > range[1]).toBe(true);
      }
    }
  });
});

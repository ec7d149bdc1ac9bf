// The harness's argv sampler (the key-leak check of every devnet file reads what it saw).
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CommandLineSampler } from '../../src/harness/index.ts';

describe('CommandLineSampler', () => {
  it('keeps every command line of a pid: one that execs another program keeps both', async () => {
    const sampler = new CommandLineSampler();
    try {
      const child = spawn('sh', ['-c', 'sleep 0.4; exec sleep 0.41'], { stdio: 'ignore' });
      await new Promise((resolve) => child.once('exit', resolve));
      sampler.stop();
      const lines = (sampler.seen.get(child.pid!) ?? '').split('\n');
      expect(lines).toContain('sh -c sleep 0.4; exec sleep 0.41');
      expect(lines).toContain('sleep 0.41');
    } finally {
      sampler.stop();
    }
  });

  it('sees a process that lives a few intervals', async () => {
    const sampler = new CommandLineSampler();
    const child = spawn('sleep', ['0.3'], { stdio: 'ignore' });
    await new Promise((resolve) => child.once('exit', resolve));
    sampler.stop();
    expect(sampler.seen.get(child.pid!)).toBe('sleep 0.3');
  });

  it('sees a grandchild started after its parent was first sampled', async () => {
    const sampler = new CommandLineSampler();
    // `sh` is sampled while it waits; the second `sleep` is born later, its parent already known.
    // Each lives 20 intervals or more: a loaded machine (load 17 in a CI run) starved the 50 ms timer long
    // enough to miss a 310 ms one; what is checked is that a late-born grandchild is followed.
    const child = spawn('sh', ['-c', 'sleep 1.01; sleep 1.51; true'], { stdio: 'ignore' });
    await new Promise((resolve) => child.once('exit', resolve));
    sampler.stop();
    const all = [...sampler.seen.values()].flatMap((lines) => lines.split('\n'));
    expect(all).toContain('sh -c sleep 1.01; sleep 1.51; true');
    expect(all).toContain('sleep 1.01');
    expect(all).toContain('sleep 1.51');
  });
});

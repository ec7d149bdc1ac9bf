// docs/static-discovery.md's walkthrough next to `localnet-node net`, run as written — its three
// shell blocks in bash, from the repository's folder, with another port than 8080 and another
// folder name only — checks that the keys stay private (mode 0600, in a folder git ignores), that
// 005 gets staked, and that the stop step leaves nothing running (the review found `npx … &`,
// whose `$!` was npm, left the manager and six nodes on port 8080).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freePorts } from '../../src/devnet/ports.ts';
import { descendants, pending, waitFor } from '../../src/harness/index.ts';
import { isAlive, recordDescendants } from '../e2e/support/processes.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The ```sh blocks of the walkthrough's section, in order. */
function walkthrough(): string[] {
  const doc = readFileSync(join(ROOT, 'docs/static-discovery.md'), 'utf8');
  const start = doc.indexOf('## Next to `localnet-node net`');
  const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

/** True when the status JSON on stdin shows 005 active (exit 0). */
const FIVE_ACTIVE = `node -e 'const s = JSON.parse(require("fs").readFileSync(0, "utf8")); process.exit(s.validators.some((v) => v.id === "005" && v.phase === "active") ? 0 : 1)'`;

describe('the static-discovery walkthrough', () => {
  it('runs as written: 005 is staked, the keys are private and ignored, and the stop step stops everything', async () => {
    const blocks = walkthrough();
    expect(blocks).toHaveLength(3);
    const [port] = await freePorts(1);
    const folder = `.tmp/static-discovery-${process.pid}`;
    const [start, look, stop] = blocks.map((block) =>
      block.replaceAll('8080', String(port)).replaceAll('.tmp/static-discovery', folder),
    );
    const script = [
      'set -e',
      start,
      look,
      `until node "$CM" status --json | ${FIVE_ACTIVE}; do sleep 1; done`,
      'echo STAKED',
      'read go',
      stop,
      'echo STOPPED',
    ].join('\n');
    // A user's shell: the machine's PATH (the block puts the project's programs first itself).
    const path = (process.env.PATH ?? '')
      .split(':')
      .filter((dir) => !dir.includes('node_modules'))
      .join(':');
    const bash = spawn('bash', ['-c', script], {
      cwd: ROOT,
      env: { PATH: path, HOME: process.env.HOME ?? '/tmp' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    bash.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    bash.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => bash.once('close', resolve));
    // Every process below bash, sampled every 50 ms until bash exits: a scan that reads only the
    // stat files of new pids (a full `descendants()` scan in each 50 ms probe cost about 0.08
    // cores), and a pid is alive only while it is the process recorded under it.
    const recorded = recordDescendants(bash.pid!);
    const seen = recorded.pids;
    void exited.then(() => recorded.stop());
    try {
      const outcome = await waitFor(
        () => {
          if (bash.exitCode !== null) return `bash exited ${bash.exitCode}`;
          return out.includes('STAKED\n') ? 'staked' : pending(out.slice(-400));
        },
        { what: 'the walkthrough to start and 005 to be active', timeoutMs: 150_000 },
      );
      expect(outcome, out).toBe('staked');
      const keys = join(ROOT, folder, 'keys.yaml');
      expect(statSync(keys).mode & 0o777).toBe(0o600);
      const ignored = spawnSync('git', ['check-ignore', '-q', keys], { cwd: ROOT });
      expect(ignored.status, `${keys} is ignored by git`).toBe(0);
      // The net, its six nodes and the manager, at least.
      expect(seen.size).toBeGreaterThanOrEqual(8);

      bash.stdin.write('go\n');
      expect(await exited, out).toBe(0);
      expect(out).toContain('STOPPED');
      expect([...seen].filter(isAlive)).toEqual([]);
      expect(existsSync(join(ROOT, folder))).toBe(false);
    } finally {
      recorded.stop();
      for (const pid of [...seen, ...descendants(bash.pid)])
        if (isAlive(pid)) process.kill(pid, 'SIGKILL');
      bash.kill('SIGKILL');
      spawnSync('rm', ['-rf', join(ROOT, folder)]);
    }
  }, 200_000);
});

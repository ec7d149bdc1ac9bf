// What a started devnet suggests (issue 17, items 3 and 7): every hint works as printed — a scale
// that changes something, `--drive` when the pacemaker is manual, the folder flag when the devnet
// is not ./.devnet — and `devnet env` exports what a shell needs, quoted.
import { describe, expect, it } from 'vitest';
import type { DevnetInfo } from '../../src/cli/devnet-file.ts';
import {
  envLines,
  readyHints,
  shellQuote,
  suggestedScale,
  v1Joiners,
} from '../../src/devnet/hints.ts';
import { silentRoom } from '../../src/manager/planner/quorum.ts';

const info: DevnetInfo = {
  kubeApi: 'http://127.0.0.1:1001',
  kubeconfig: '/repo/.devnet/kubeconfig',
  namespace: 'devnet',
  statefulSet: 'validator',
  validators: 4,
  keys: 32,
  pacemaker: 'auto',
  blockIntervalMs: 1000,
  txMode: 'rpc',
  chainRpcUrl: 'http://127.0.0.1:1002',
  managerUrl: 'http://127.0.0.1:8080',
  token: 'tok',
  managerLog: '/repo/.devnet/manager.log',
  dir: '/repo/.devnet',
  managerRpcUrl: 'http://127.0.0.1:8080',
};
const run = { node: '/repo/node_modules/node/bin/node', entry: '/repo/src/bin/cluster-manager.ts' };

describe('the hints of a ready devnet', () => {
  it('suggest two more validators, with nothing to export first', () => {
    expect(readyHints(info, '/repo', run)).toEqual([
      'npx cluster-manager scale 6 --wait active',
      'npx cluster-manager status',
      'kubectl --kubeconfig .devnet/kubeconfig get pods',
    ]);
  });

  it('scale to a number that changes something: --validators 6 suggests 8, a full set scales down', () => {
    expect(readyHints({ ...info, validators: 6 }, '/repo', run)[0]).toBe(
      'npx cluster-manager scale 8 --wait active',
    );
    expect(suggestedScale(6, 7)).toBe(7);
    expect(suggestedScale(7, 7)).toBe(6);
    expect(suggestedScale(1, 1)).toBeUndefined();
  });

  it('on --fidelity v1 suggest only what V1 survives: the genesis voters besides the leader > 2/3 of all rows', () => {
    // 3(N − 1) > 2(N + k): 4 or 5 genesis validators take no joiner, 6 and 7 one, 8 two.
    expect([4, 5, 6, 7, 8, 9, 10].map((n) => suggestedScale(n, 32, 'v1'))).toEqual([
      undefined,
      undefined,
      7,
      8,
      10,
      11,
      12,
    ]);
    // Never one less: the unstaked row still counts and its voter is gone.
    expect(suggestedScale(7, 7, 'v1')).toBeUndefined();
    expect(suggestedScale(2, 32, 'v1')).toBeUndefined();
    expect(
      readyHints({ ...info, fidelity: 'v1', validators: 7, pacemaker: 'manual' }, '/repo', run)[0],
    ).toBe('npx cluster-manager scale 8 --wait staked --drive');
  });

  it("v1Joiners is the manager's own rule: what the scaler lets join a genesis set (planner/quorum.ts)", () => {
    // The hint must never suggest a scale the manager then refuses (CHAIN_WOULD_HALT), nor hide one
    // it takes.
    for (let n = 1; n <= 40; n++)
      expect(v1Joiners(n), `${n} genesis validators`).toBe(
        Math.max(0, silentRoom(n, n, { leaderVoteCounts: false })),
      );
  });

  it('on --fidelity v1 with 4 genesis validators (any scale halts V1) suggest a devnet of 7 instead', () => {
    const v1 = { ...info, fidelity: 'v1' as const, pacemaker: 'manual' as const };
    expect(readyHints(v1, '/repo', run)).toEqual([
      'npx cluster-manager devnet --fidelity v1 --validators 7   # after Ctrl-C: V1 halts on any scale of 4 genesis validators; 7 take scale 8',
      'npx cluster-manager status',
      'kubectl --kubeconfig .devnet/kubeconfig get pods',
    ]);
    expect(readyHints({ ...v1, validators: 3, txMode: 'cli' }, '/repo', run)[0]).toBe(
      'npx cluster-manager devnet --fidelity v1 --validators 7 --tx-mode cli   # after Ctrl-C: V1 makes no block with 3 validators; 7 take scale 8',
    );
    expect(readyHints({ ...v1, dir: '/tmp/net 2' }, '/repo', run)[0]).toMatch(
      /^npx cluster-manager devnet --fidelity v1 --validators 7 --dir '\/tmp\/net 2' {3}#/,
    );
  });

  it('add --drive when the pacemaker is manual', () => {
    expect(readyHints({ ...info, pacemaker: 'manual' }, '/repo', run)[0]).toBe(
      'npx cluster-manager scale 6 --wait active --drive',
    );
  });

  it('name the folder only when the CLI would not find it from the shell that typed npm start', () => {
    const elsewhere = { ...info, dir: '/tmp/net 2', kubeconfig: '/tmp/net 2/kubeconfig' };
    expect(readyHints(elsewhere, '/repo', run)).toEqual([
      "npx cluster-manager --devnet '/tmp/net 2' scale 6 --wait active",
      "npx cluster-manager --devnet '/tmp/net 2' status",
      "kubectl --kubeconfig '/tmp/net 2/kubeconfig' get pods",
    ]);
    // From a folder below the project the CLI finds /repo/.devnet by itself (upward, as git).
    expect(readyHints(info, '/repo/src/sub', run)[1]).toBe('npx cluster-manager status');
    expect(readyHints(info, '/elsewhere', run)[1]).toBe(
      'npx cluster-manager --devnet /repo/.devnet status',
    );
  });

  it('without a manager: a manager of your own that is the process itself (SIGTERM stops it)', () => {
    expect(readyHints({ ...info, managerUrl: null }, '/repo', run)).toEqual([
      'kubectl --kubeconfig .devnet/kubeconfig get pods',
      'node_modules/node/bin/node --env-file=.devnet/manager.env src/bin/cluster-manager.ts run   # a manager of your own; Ctrl-C or SIGTERM stops it',
      'npx cluster-manager status',
    ]);
  });
});

describe('devnet env', () => {
  it("exports the manager's URL (its own, or the one manager.env will listen at), the token, KUBECONFIG and the chain", () => {
    expect(envLines({ ...info, managerUrl: null, managerRpcUrl: 'http://127.0.0.1:9090' })).toEqual(
      [
        'export CLUSTER_MANAGER_URL=http://127.0.0.1:9090',
        'export CLUSTER_MANAGER_TOKEN=tok',
        'export KUBECONFIG=/repo/.devnet/kubeconfig',
        'export POCKET_REMOTE_CLI_URL=http://127.0.0.1:1002',
      ],
    );
  });

  it('quotes what a shell would split or expand', () => {
    expect(shellQuote('/tmp/a b')).toBe("'/tmp/a b'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(shellQuote('$HOME')).toBe("'$HOME'");
    expect(shellQuote('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
  });
});

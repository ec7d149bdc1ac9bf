// A control server with a participation record of any size, without a chain: the real server
// (buildServer: routes, page, event stream) listening on loopback, a real ParticipationRecord fed
// with synthetic blocks the way the chain view feeds it (addBlock, then addRows), and a fake
// control plane for the validators' phases and reasons. For the page's browser tests that need
// what a devnet cannot easily make (HTML in a reason or a service URL) and for the benchmark at
// 1,000 validators × 200 heights.
import { pino } from 'pino';
import { ActionKind, ChainStatus, type ChainValidator } from '../../src/manager/model.ts';
import { participationSource } from '../../src/manager/participation/participation.ts';
import { ParticipationRecord } from '../../src/manager/participation/record.ts';
import { startControlServer } from '../../src/manager/rpc/server.ts';
import type { ValidatorStatus } from '../../src/manager/status.ts';
import { FakeControlPlane, readyState } from './fake-control-plane.ts';

export const RIG_TOKEN = 'participation-rig-token-0123456789';

export interface RigOptions {
  validators: number;
  heights: number;
  /** A validator's phase and reason (default: active, signing). */
  status?: (id: string, index: number) => { phase: string; reason: string };
  /** A validator's on-chain service URL. */
  serviceUrl?: (id: string, index: number) => string;
}

export interface ParticipationRig {
  readonly url: string;
  readonly token: string;
  readonly control: FakeControlPlane;
  /** The newest height. */
  readonly height: number;
  /** Commits one more synthetic block (a `block` event to every follower). */
  addHeight(): number;
  close(): Promise<void>;
}

/** The id of the i-th validator (from 0): 001 …, four digits from 1,000 on so that they sort. */
export function rigId(i: number, validators: number): string {
  return String(i + 1).padStart(validators >= 1_000 ? 4 : 3, '0');
}
const addressOf = (i: number): string => `e${(i + 1).toString(16).padStart(39, '0')}`;

/**
 * Starts the rig. Every validator signs except, at each height, a few that miss (a pattern, so the
 * grid shows every state): the proposer rotates, one validator stakes at the last height.
 */
export async function startParticipationRig(options: RigOptions): Promise<ParticipationRig> {
  const n = options.validators;
  const idOf = (i: number): string => rigId(i, n);
  const record = new ParticipationRecord();
  const rows = new Map<string, ChainValidator>();
  for (let i = 0; i < n; i++)
    rows.set(addressOf(i), {
      address: addressOf(i),
      status: ChainStatus.staked,
      stakedAmount: '15000000000',
      unstakingHeight: -1,
      serviceUrl: options.serviceUrl?.(idOf(i), i) ?? `127.0.0.1:${20_000 + i}`,
    });
  let height = 0;
  const addHeight = (): number => {
    height++;
    const missing = new Set([height % n, (height * 7) % n]);
    const signers = [...rows.keys()].filter((_, i) => !missing.has(i));
    record.addBlock({
      height,
      hash: `${height.toString(16).padStart(8, '0')}${'c'.repeat(56)}`,
      parentHash: `${(height - 1).toString(16).padStart(8, '0')}${'c'.repeat(56)}`,
      time: Date.now(),
      signers,
      proposer: addressOf(height % n === 0 ? 1 : (height + 1) % n),
      txs:
        height % 50 === 0
          ? [
              {
                hash: `${'d'.repeat(60)}${height.toString(16).padStart(4, '0')}`,
                height,
                resultCode: 0,
                signer: addressOf(n - 1),
                kind: ActionKind.stake,
              },
            ]
          : [],
    });
    record.addRows(height, rows);
    return height;
  };
  record.addRows(0, rows);
  for (let h = 0; h < options.heights; h++) addHeight();
  const control = new FakeControlPlane();
  control.validatorRows = Array.from({ length: n }, (_, i) => {
    const { phase, reason } = options.status?.(idOf(i), i) ?? {
      phase: 'active',
      reason: `staked and signing (last signature at height ${height})`,
    };
    return {
      key: idOf(i),
      id: idOf(i),
      address: addressOf(i),
      pod: `validator-${i}`,
      ready: true,
      wanted: true,
      chain: {
        status: 'staked',
        stakedAmount: '15000000000',
        unstakingHeight: null,
        lastSignedHeight: height,
      },
      phase,
      reason,
      waitingFor: null,
      pendingAction: null,
      lastAction: null,
    } as ValidatorStatus;
  });
  const keys = new Map([...rows.keys()].map((address, i) => [address, idOf(i)]));
  const ids = new Map([...keys].map(([address, id]) => [id, address]));
  const server = await startControlServer(
    {
      control,
      token: RIG_TOKEN,
      logger: pino({ level: 'silent' }),
      version: 'rig',
      streams: { max: 64 },
      participation: participationSource({
        record,
        keys: { idOfAddress: (a) => keys.get(a), addressOf: (id) => ids.get(id) },
        desired: () => ({ validators: new Map(), unresolvedWanted: [], problems: [] }),
        chain: {
          get height() {
            return height;
          },
          validators: rows,
        },
      }),
    },
    { host: '127.0.0.1', port: 0 },
  );
  control.ready = readyState(height);
  return {
    url: server.url,
    token: RIG_TOKEN,
    control,
    get height() {
      return height;
    },
    addHeight: () => {
      const h = addHeight();
      control.ready = readyState(h);
      return h;
    },
    close: () => server.close(),
  };
}

// The fence between a replica that may have lost its lease and the chain (issue 30): every pass
// of the reconciler runs in the leadership term current when it began, and a transaction is sent
// (or sent again) only while that term is still current and the lease is surely held now
// (`Leadership.mayAct`: renewed less than a renew deadline ago by the monotonic clock). A pass
// begun by a leader that has since been demoted — or demoted and elected again — sends nothing:
// its decisions were made on a view another leader may have acted on meanwhile.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ActionRecord } from '../model.ts';
import type { ChainAdapter, PreparedTx, SendOutcome, TxRequest } from '../chain/adapter.ts';
import { ManagerError } from '../errors.ts';

/** What the fence asks of leader election (kube/leader-election.ts's LeaderElector). */
export interface Leadership {
  /** The current term while leading; undefined otherwise. */
  readonly term: number | undefined;
  /** Leading, and the lease surely still held now. */
  mayAct(): boolean;
}

/** No term at all: the pass began while this replica was not leading. */
const NO_TERM = -1;

export class SendFence {
  readonly #leadership: () => Leadership | undefined;
  readonly #passes = new AsyncLocalStorage<number>();

  /** `leadership`: undefined while the manager runs without election (the fence never closes). */
  constructor(leadership: () => Leadership | undefined) {
    this.#leadership = leadership;
  }

  /** Runs one pass in the term current now: what it sends is checked against that term. */
  run<T>(pass: () => Promise<T>): Promise<T> {
    return this.#passes.run(this.#leadership()?.term ?? NO_TERM, pass);
  }

  /**
   * Throws NOT_LEADER (nothing was sent) unless the calling pass's term is still the current one
   * and the lease is surely held; `what` names the transaction in the message.
   */
  check(what: string): void {
    const leadership = this.#leadership();
    if (leadership === undefined) return;
    const passTerm = this.#passes.getStore();
    const current = leadership.term;
    if (passTerm !== undefined && passTerm === current && leadership.mayAct()) return;
    const why =
      current === undefined
        ? 'this replica does not lead'
        : passTerm !== current
          ? `its pass began in ${passTerm === undefined || passTerm === NO_TERM ? 'no term' : `term ${passTerm}`}, the current term is ${current}`
          : 'the lease was not renewed within the renew deadline';
    throw new ManagerError('NOT_LEADER', `not sent: ${what}: ${why}`, {
      details: { term: current ?? null, passTerm: passTerm ?? null },
    });
  }
}

/** `adapter` with the fence checked at the last moment before each send and re-send. */
export function fencedSender(adapter: ChainAdapter, fence: SendFence): ChainAdapter {
  return {
    transport: adapter.transport,
    prepare: (request: TxRequest): PreparedTx => {
      // Before the journal entry too: a refused action leaves no record to follow later.
      fence.check(`${request.kind} of ${request.key.address}`);
      return adapter.prepare(request);
    },
    send: (request: TxRequest, prepared: PreparedTx, signal: AbortSignal): Promise<SendOutcome> => {
      fence.check(`${request.kind} of ${request.key.address}`);
      return adapter.send(request, prepared, signal);
    },
    resend: (record: ActionRecord, signal: AbortSignal) => {
      fence.check(`${record.kind} of ${record.address} (again, seq ${record.seq})`);
      return adapter.resend(record, signal);
    },
    triggerView: (signal) => adapter.triggerView(signal),
    ...(adapter.removeLeftovers === undefined
      ? {}
      : { removeLeftovers: () => adapter.removeLeftovers?.() ?? Promise.resolve(0) }),
  };
}

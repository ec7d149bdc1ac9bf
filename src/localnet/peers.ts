// Who a node talks to: validators' service URLs from genesis and from the chain's current set,
// plus `--peers`; minus itself (recognised by its own service URL or its node id).

export interface PeerSources {
  /** From `--peers`. */
  configured: readonly string[];
  /** Genesis validators' service URLs. */
  genesis: () => readonly string[];
  /** Service URLs of the current active set. */
  current: () => readonly string[];
  /** This node's own service URL when it is a staked validator. */
  own: () => string | undefined;
}

export class Peers {
  readonly #sources: PeerSources;
  readonly #self = new Set<string>();

  constructor(sources: PeerSources) {
    this.#sources = sources;
  }

  /** Every distinct peer address, self excluded. */
  list(): string[] {
    const own = this.#sources.own();
    const all = new Set([
      ...this.#sources.configured,
      ...this.#sources.genesis(),
      ...this.#sources.current(),
    ]);
    return [...all].filter((peer) => peer !== '' && peer !== own && !this.#self.has(peer));
  }

  /** A peer answered with our own node id: never send to it again. */
  markSelf(peer: string): void {
    this.#self.add(peer);
  }
}

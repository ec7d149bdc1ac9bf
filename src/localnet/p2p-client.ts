// HTTP client for the p2p port of other nodes: JSON over keep-alive connections, short timeouts;
// peers are `host:port` as in `service_url` (no scheme).
// node:http(s) through process.getBuiltinModule, not an ESM import: eslint.config.js says why.
const { Agent, request } = process.getBuiltinModule('node:http');

export interface PeerClientOptions {
  timeoutMs: number;
  /** Sent as `x-localnet-node`, so a node can recognise (and skip) itself among its peers. */
  nodeId: string;
}

export class PeerClient {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 8 });
  readonly #options: PeerClientOptions;

  constructor(options: PeerClientOptions) {
    this.#options = options;
  }

  /** GET `path` on `peer`; resolves the parsed JSON, rejects on transport, status or parse errors. */
  get(peer: string, path: string, timeoutMs?: number): Promise<unknown> {
    return this.#send({ peer, path, method: 'GET', timeoutMs });
  }

  post(peer: string, path: string, body: unknown, timeoutMs?: number): Promise<unknown> {
    return this.#send({ peer, path, method: 'POST', body: JSON.stringify(body), timeoutMs });
  }

  /** Fire and forget: failures are expected (peers come and go) and ignored. */
  send(peer: string, path: string, body: unknown): void {
    this.post(peer, path, body).catch(() => undefined);
  }

  close(): void {
    this.#agent.destroy();
  }

  #send(call: {
    peer: string;
    path: string;
    method: string;
    body?: string;
    timeoutMs: number | undefined;
  }): Promise<unknown> {
    const { host, port } = splitHostPort(call.peer);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          agent: this.#agent,
          host,
          port,
          path: call.path,
          method: call.method,
          headers: {
            'x-localnet-node': this.#options.nodeId,
            ...(call.body === undefined
              ? {}
              : {
                  'content-type': 'application/json',
                  'content-length': Buffer.byteLength(call.body),
                }),
          },
          timeout: call.timeoutMs ?? this.#options.timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if ((res.statusCode ?? 0) >= 300) {
              reject(new Error(`${call.peer}${call.path}: HTTP ${res.statusCode}`));
              return;
            }
            try {
              resolve(text === '' ? undefined : JSON.parse(text));
            } catch (error: unknown) {
              reject(error instanceof Error ? error : new Error(String(error)));
            }
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${call.peer}${call.path}: timed out`)));
      req.on('error', reject);
      req.end(call.body);
    });
  }
}

/** Splits `host:port` (IPv6 in brackets allowed); a missing port means V1's 42069. */
export function splitHostPort(address: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d+))?$/.exec(address.replace(/^[a-z]+:\/\//, ''));
  if (match === null) return { host: address, port: 42069 };
  return { host: match[1] ?? match[2] ?? address, port: Number(match[3] ?? 42069) };
}

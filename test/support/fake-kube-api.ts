// An in-memory Kubernetes API for unit tests: client-node's generated APIs run unchanged (request
// serialisation, headers, `ApiException` on a non-2xx answer) over a fake HTTP library, so no
// socket is opened. It keeps objects by path and answers as the apiserver does for the verbs the
// manager uses on Events and Leases: create (409 AlreadyExists), get (404 NotFound), replace
// (409 Conflict on a stale metadata.resourceVersion, 404 when absent), and JSON merge patch
// (RFC 7386). Faults are injected per verb with `failNext`, races with `beforeNext`.
import {
  createConfiguration,
  ResponseContext,
  SelfDecodingBody,
  ServerConfiguration,
  wrapHttpLibrary,
  type Configuration,
  type RequestContext,
} from '@kubernetes/client-node';

type Json = Record<string, unknown>;

export interface SeenRequest {
  method: string;
  path: string;
  contentType: string | undefined;
  body: Json | undefined;
}

export class FakeKubeApi {
  /** Stored objects by their path, e.g. `/api/v1/namespaces/ns/events/name`. */
  readonly objects = new Map<string, Json>();
  readonly requests: SeenRequest[] = [];
  readonly #faults: { method: string; status: number; reason: string }[] = [];
  readonly #before: { method: string; run: () => void }[] = [];
  readonly #hangs: { method: string; released: Promise<void> }[] = [];
  #resourceVersion = 0;

  /** A client-node configuration whose requests this fake answers. */
  readonly configuration: Configuration = createConfiguration({
    baseServer: new ServerConfiguration('http://fake-kube.invalid', {}),
    authMethods: {},
    httpApi: wrapHttpLibrary({ send: (request) => this.#send(request) }),
  });

  /** The next request with this method (GET, POST, PUT, PATCH) is answered with `status`. */
  failNext(method: string, status: number, reason = 'InternalError'): void {
    this.#faults.push({ method, status, reason });
  }

  /** Runs `run` just before the next request with this method is served (another writer's turn). */
  beforeNext(method: string, run: () => void): void {
    this.#before.push({ method, run });
  }

  /**
   * The next request with this method gets no answer until the returned function is called (then
   * 503): a request that hangs, as one to a partitioned apiserver does until it times out.
   */
  hangNext(method: string): () => void {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.#hangs.push({ method, released });
    return release;
  }

  /** Objects stored under a collection path (`/api/v1/namespaces/ns/events`). */
  list(collection: string): Json[] {
    return [...this.objects]
      .filter(([path]) => path.startsWith(`${collection}/`))
      .map(([, object]) => object);
  }

  /** Writes an object as another client would (a new resourceVersion). */
  put(path: string, object: Json): void {
    this.objects.set(path, this.#stamp(object));
  }

  #send(request: RequestContext): Promise<ResponseContext> {
    const url = new URL(request.getUrl());
    const method: string = request.getHttpMethod();
    const raw = request.getBody();
    const body = typeof raw === 'string' && raw !== '' ? (JSON.parse(raw) as Json) : undefined;
    const contentType = request.getHeaders()['Content-Type'];
    this.requests.push({ method, path: url.pathname, contentType, body });
    const before = this.#before.findIndex((b) => b.method === method);
    if (before >= 0) this.#before.splice(before, 1)[0]!.run();
    const hang = this.#hangs.findIndex((h) => h.method === method);
    if (hang >= 0) {
      const [h] = this.#hangs.splice(hang, 1);
      return h!.released.then(() =>
        answer(503, status(503, 'ServiceUnavailable', 'the request hung')),
      );
    }
    const fault = this.#faults.findIndex((f) => f.method === method);
    if (fault >= 0) {
      const [f] = this.#faults.splice(fault, 1);
      return answer(f!.status, status(f!.status, f!.reason, 'injected fault'));
    }
    return this.#serve(method, url.pathname, body, contentType);
  }

  #serve(
    method: string,
    path: string,
    body: Json | undefined,
    contentType: string | undefined,
  ): Promise<ResponseContext> {
    const existing = this.objects.get(path);
    switch (method) {
      case 'POST': {
        const name = (body?.metadata as Json | undefined)?.name;
        if (typeof name !== 'string') return answer(422, status(422, 'Invalid', 'no name'));
        const at = `${path}/${name}`;
        if (this.objects.has(at))
          return answer(409, status(409, 'AlreadyExists', `"${name}" already exists`));
        const created = this.#stamp(body!);
        this.objects.set(at, created);
        return answer(201, created);
      }
      case 'GET':
        return existing === undefined ? notFound(path) : answer(200, existing);
      case 'PUT': {
        if (existing === undefined) return notFound(path);
        const sent = (body?.metadata as Json | undefined)?.resourceVersion;
        const current = (existing.metadata as Json).resourceVersion;
        if (sent !== undefined && sent !== current)
          return answer(
            409,
            status(409, 'Conflict', 'the object has been modified; please apply your changes'),
          );
        const replaced = this.#stamp(body!);
        this.objects.set(path, replaced);
        return answer(200, replaced);
      }
      case 'PATCH': {
        if (existing === undefined) return notFound(path);
        if (contentType !== 'application/merge-patch+json')
          return answer(415, status(415, 'UnsupportedMediaType', `${contentType} not handled`));
        const patched = this.#stamp(mergePatch(existing, body ?? {}) as Json);
        this.objects.set(path, patched);
        return answer(200, patched);
      }
      default:
        return answer(405, status(405, 'MethodNotAllowed', method));
    }
  }

  #stamp(object: Json): Json {
    const metadata = { ...(object.metadata as Json | undefined) };
    metadata.resourceVersion = String(++this.#resourceVersion);
    return { ...object, metadata };
  }
}

/** RFC 7386: null deletes, objects merge, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out = new Map(
    target !== null && typeof target === 'object' && !Array.isArray(target)
      ? Object.entries(target as Json)
      : [],
  );
  for (const [key, value] of Object.entries(patch as Json)) {
    if (value === null) out.delete(key);
    else out.set(key, mergePatch(out.get(key), value));
  }
  return Object.fromEntries(out);
}

function status(code: number, reason: string, message: string): Json {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message };
}

function notFound(path: string): Promise<ResponseContext> {
  return answer(404, status(404, 'NotFound', `${path.split('/').at(-1) ?? ''} not found`));
}

function answer(code: number, body: Json): Promise<ResponseContext> {
  const bytes = Buffer.from(JSON.stringify(body));
  return Promise.resolve(
    new ResponseContext(
      code,
      { 'content-type': 'application/json' },
      new SelfDecodingBody(Promise.resolve(bytes)),
    ),
  );
}

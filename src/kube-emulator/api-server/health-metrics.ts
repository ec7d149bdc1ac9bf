// The apiserver's health endpoints and a part of its /metrics (apiserver
// pkg/server/healthz/healthz.go, v0.32.4, and the apiserver_request_total /
// apiserver_storage_objects series of pkg/endpoints/metrics and pkg/storage): `/readyz`,
// `/livez`, `/healthz` answer `ok`, with `?verbose` one `[+]<check> ok` line per check and
// `<name> check passed`, `?exclude=<check>` leaving one out, `/<name>/<check>` one check.
import { storageKind } from '../kinds.ts';
import type { Store } from '../store.ts';
import type { Reply } from './resource-handler.ts';
import { parseResourcePath } from './routes.ts';

const POST_START_HOOKS = [
  'start-apiserver-admission-initializer',
  'generic-apiserver-start-informers',
  'priority-and-fairness-config-consumer',
  'priority-and-fairness-filter',
  'storage-object-count-tracker-hook',
  'start-system-namespaces-controller',
  'start-cluster-authentication-info-controller',
  'start-legacy-token-tracking-controller',
  'start-service-ip-repair-controllers',
  'rbac/bootstrap-roles',
  'scheduling/bootstrap-system-priority-classes',
  'priority-and-fairness-config-producer',
  'bootstrap-controller',
].map((hook) => `poststarthook/${hook}`);

/** The checks of each endpoint, in the order a 1.32 kube-apiserver lists them. */
const CHECKS: Readonly<Record<string, readonly string[]>> = {
  healthz: ['ping', 'log', 'etcd', ...POST_START_HOOKS],
  livez: ['ping', 'log', 'etcd', ...POST_START_HOOKS],
  readyz: [
    'ping',
    'log',
    'etcd',
    'etcd-readiness',
    'informer-sync',
    ...POST_START_HOOKS,
    'shutdown',
  ],
};

const TEXT = 'text/plain; charset=utf-8';

const text = (status: number, body: string): Reply => ({
  status,
  body: Buffer.from(body),
  contentType: TEXT,
});

/** The answer to a health path, or undefined when `path` is none. */
export function healthReply(path: string, query: URLSearchParams): Reply | undefined {
  const match = /^\/(healthz|readyz|livez)(?:\/(.+))?$/.exec(path);
  if (match?.[1] === undefined) return undefined;
  const name = match[1];
  const checks = CHECKS[name] ?? [];
  const one = match[2];
  if (one !== undefined) {
    if (!checks.includes(one)) return text(404, '404 page not found\n');
    return text(200, 'ok');
  }
  if (!query.has('verbose')) return text(200, 'ok');
  const excluded = new Set(query.getAll('exclude'));
  const lines = checks.map((check) =>
    excluded.has(check) ? `[+]${check} excluded: ok` : `[+]${check} ok`,
  );
  return text(200, `${lines.join('\n')}\n${name} check passed\n`);
}

function verbOf(method: string, named: boolean, watching: boolean): string {
  if (method === 'GET') return watching ? 'WATCH' : named ? 'GET' : 'LIST';
  if (method === 'DELETE' && !named) return 'DELETECOLLECTION';
  return method;
}

/** Counts of served requests, by the labels of apiserver_request_total. */
export class RequestMetrics {
  readonly #counts = new Map<string, number>();

  /** One finished request (resource requests only, as the apiserver's metric). */
  record(method: string, url: URL, code: number): void {
    const route = parseResourcePath(url.pathname);
    if (route === undefined) return;
    const watching =
      route.watchPath ||
      url.searchParams.get('watch') === 'true' ||
      url.searchParams.get('watch') === '1';
    const scope =
      route.name !== undefined
        ? 'resource'
        : route.namespace !== undefined
          ? 'namespace'
          : 'cluster';
    const labels = [
      `code="${code}"`,
      'component="apiserver"',
      `dry_run="${url.searchParams.has('dryRun') ? 'All' : ''}"`,
      `group="${route.info.group}"`,
      `resource="${route.info.resource}"`,
      `scope="${scope}"`,
      `subresource="${route.subresource ?? ''}"`,
      `verb="${verbOf(method, route.name !== undefined, watching)}"`,
      `version="${route.info.version}"`,
    ].join(',');
    this.#counts.set(labels, (this.#counts.get(labels) ?? 0) + 1);
  }

  /** The Prometheus text exposition (format 0.0.4) of the series kept. */
  exposition(store: Store): string {
    const lines = [
      '# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      '# TYPE apiserver_request_total counter',
      ...[...this.#counts]
        .sort()
        .map(([labels, count]) => `apiserver_request_total{${labels}} ${count}`),
      '# HELP apiserver_storage_objects [STABLE] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.',
      '# TYPE apiserver_storage_objects gauge',
      ...store
        .tables()
        .map((table) => {
          const info = storageKind(table);
          const resource = info.group === '' ? info.resource : `${info.resource}.${info.group}`;
          return `apiserver_storage_objects{resource="${resource}"} ${store.list(table).length}`;
        })
        .sort(),
    ];
    return `${lines.join('\n')}\n`;
  }
}

// Resource paths: /api/v1/…, /apis/<group>/<version>/…, namespaced or not, with the legacy
// /watch/ prefix and subresources.
import { findKind, type KindInfo } from '../kinds.ts';

export interface ResourceRoute {
  info: KindInfo;
  /** The namespace in the path; undefined for cluster-scoped kinds and all-namespace lists. */
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
  /** The legacy `/watch/` form was used. */
  watchPath: boolean;
}

/** Parses a resource path; undefined when it names no served kind. */
export function parseResourcePath(pathname: string): ResourceRoute | undefined {
  const segments = pathname
    .split('/')
    .filter((segment) => segment !== '')
    .map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (segments[0] === 'api' && segments.length >= 3) {
    group = '';
    version = segments[1] ?? '';
    rest = segments.slice(2);
  } else if (segments[0] === 'apis' && segments.length >= 4) {
    group = segments[1] ?? '';
    version = segments[2] ?? '';
    rest = segments.slice(3);
  } else return undefined;
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const info = findKind(group, version, rest[2] ?? '');
    if (info?.namespaced === true && rest.length <= 5) {
      return { info, namespace: rest[1], name: rest[3], subresource: rest[4], watchPath };
    }
  }
  const info = findKind(group, version, rest[0] ?? '');
  if (info === undefined || rest.length > 3) return undefined;
  if (info.namespaced && rest.length > 1) return undefined;
  return { info, namespace: undefined, name: rest[1], subresource: rest[2], watchPath };
}

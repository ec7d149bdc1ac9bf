// Services (kubernetes pkg/registry/core/service/strategy.go and storage/alloc.go,
// pkg/apis/core/validation/validation.go validateUpgradeDowngradeClusterIPs, v1.32): an update
// that leaves the allocated cluster IP and node ports out keeps them (patchAllocatedValues), a
// changed `clusterIP` the client did not mirror in `clusterIPs` counts there
// (normalizeClusterIPs), and the primary cluster IP never changes once set.
import { isObject, objects } from '../json.ts';
import type { StatusCause } from '../status-errors.ts';
import type { KubeObject } from '../types.ts';
import { invalidCause } from './field-errors.ts';

function specOf(object: KubeObject): Record<string, unknown> {
  return isObject(object.spec) ? object.spec : {};
}

const needsClusterIP = (spec: Record<string, unknown>): boolean => spec.type !== 'ExternalName';

/** patchAllocatedValues and normalizeClusterIPs, before defaults and validation of an update. */
export function prepareServiceUpdate(object: KubeObject, old: KubeObject): void {
  const spec = specOf(object);
  const oldSpec = specOf(old);
  if (!isObject(object.spec) || !needsClusterIP(spec) || !needsClusterIP(oldSpec)) return;
  const oldIPs = Array.isArray(oldSpec.clusterIPs) ? oldSpec.clusterIPs : [];
  if (spec.clusterIP === undefined || spec.clusterIP === '') {
    spec.clusterIP = oldSpec.clusterIP;
    if (!Array.isArray(spec.clusterIPs) || spec.clusterIPs.length === 0) spec.clusterIPs = oldIPs;
  } else if (
    spec.clusterIP !== oldSpec.clusterIP &&
    JSON.stringify(spec.clusterIPs ?? oldIPs) === JSON.stringify(oldIPs)
  ) {
    spec.clusterIPs = [spec.clusterIP];
  }
  const oldPorts = objects(oldSpec.ports);
  for (const port of objects(spec.ports)) {
    if (port.nodePort !== undefined) continue;
    const same = oldPorts.find(
      (p) => p.port === port.port && (p.protocol ?? 'TCP') === (port.protocol ?? 'TCP'),
    );
    if (same?.nodePort !== undefined) port.nodePort = same.nodePort;
  }
}

/** validateUpgradeDowngradeClusterIPs: each cluster IP "may not change once set". */
export function serviceUpdateRule(object: KubeObject, old: KubeObject | undefined): StatusCause[] {
  if (old === undefined) return [];
  const spec = specOf(object);
  const oldSpec = specOf(old);
  if (!needsClusterIP(spec) || !needsClusterIP(oldSpec)) return [];
  const ips = Array.isArray(spec.clusterIPs) ? (spec.clusterIPs as unknown[]) : [];
  const oldIPs = Array.isArray(oldSpec.clusterIPs) ? (oldSpec.clusterIPs as unknown[]) : [];
  if (ips.length === 0 && oldIPs.length > 0)
    return [invalidCause('spec.clusterIPs[0]', ips, 'primary clusterIP can not be unset')];
  return oldIPs.flatMap((ip, index) =>
    index < ips.length && ips[index] !== ip
      ? [invalidCause(`spec.clusterIPs[${index}]`, ips, 'may not change once set')]
      : [],
  );
}

// Kubernetes times as the manager's caches hold them: client-node's list deserializes them to
// Dates, a watch event leaves them RFC 3339 text.

/** Milliseconds since the epoch of a Kubernetes time, or undefined when it is neither. */
export function kubeTimeMs(value: unknown): number | undefined {
  if (!(value instanceof Date) && typeof value !== 'string') return undefined;
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

// Go's time.Duration text form (metav1.Duration's JSON): String() and ParseDuration, in
// nanoseconds.

const units: Readonly<Record<string, number>> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  μs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** Go's time.ParseDuration; 0 for text it would refuse (the caller validated it, or not). */
export function parseDuration(text: string): number {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest.startsWith('-')) sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  let total = 0;
  const part = /^(\d*\.?\d*)(ns|us|µs|μs|ms|s|m|h)/;
  while (rest !== '') {
    const match = part.exec(rest);
    if (match?.[1] === undefined || match[2] === undefined || match[1] === '' || match[1] === '.')
      return 0;
    total += Number(match[1]) * (units[match[2]] ?? 0);
    rest = rest.slice(match[0].length);
  }
  return sign * Math.round(total);
}

/** Go's time.Duration.String(): `1h2m3.5s`, `1.5ms`, `0s`. */
export function formatDuration(nanos: number): string {
  if (nanos === 0) return '0s';
  const sign = nanos < 0 ? '-' : '';
  let n = Math.abs(nanos);
  if (n < 1e9) {
    if (n < 1e3) return `${sign}${n}ns`;
    if (n < 1e6) return `${sign}${trim(n / 1e3)}µs`;
    return `${sign}${trim(n / 1e6)}ms`;
  }
  const hours = Math.floor(n / 3600e9);
  n -= hours * 3600e9;
  const minutes = Math.floor(n / 60e9);
  n -= minutes * 60e9;
  const seconds = `${trim(n / 1e9)}s`;
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}`;
  return `${sign}${seconds}`;
}

function trim(value: number): string {
  return String(Number(value.toFixed(9)));
}

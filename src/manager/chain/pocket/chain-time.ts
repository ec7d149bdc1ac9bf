// Pocket V1's block timestamps: its RPC writes a block header's time with Go's
// `time.Time.String()` (rpc/handlers_query.go renders the header's protobuf Timestamp that way).
/**
 * Parses a block header's timestamp: Go's `time.Time.String()` as V1's RPC writes it
 * (`2006-01-02 15:04:05.999999999 -0700 MST`, maybe with a ` m=+…` monotonic suffix) or RFC 3339.
 * Undefined when the text is neither.
 */
export function parseChainTime(text: string): number | undefined {
  const go = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d+)? ([+-])(\d\d)(\d\d)\b/.exec(text);
  if (go !== null) {
    const [, date, time, fraction = '', sign, hours, minutes] = go;
    const millis = fraction === '' ? '' : fraction.slice(0, 4).padEnd(4, '0');
    const ms = Date.parse(`${date}T${time}${millis}${sign}${hours}:${minutes}`);
    return Number.isNaN(ms) ? undefined : ms;
  }
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(text)) {
    const ms = Date.parse(text);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

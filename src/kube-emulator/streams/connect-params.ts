// Query parameters of the pod subresources (log, exec, attach, portforward) and of the other
// option kinds decoded by apimachinery's parameter codec (`pkg/runtime/conversion.go`).
import { badRequest } from '../status-errors.ts';

/**
 * A boolean option: absent is false, `0` and any case of `false` are false, anything else,
 * even an empty value, is true (apimachinery `Convert_Slice_string_To_bool`).
 */
export function optionBool(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  if (value === null) return false;
  return !(value === '0' || value.toLowerCase() === 'false');
}

/** An int64 option (`strconv.ParseInt(s, 10, 64)`); 400 with Go's message when malformed. */
export function optionInt(query: URLSearchParams, name: string): number | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  if (!/^[+-]?\d+$/.test(value)) {
    throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`);
  }
  const parsed = BigInt(value);
  if (parsed > 9223372036854775807n || parsed < -9223372036854775808n) {
    throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(value)}: value out of range`);
  }
  return Number(parsed);
}

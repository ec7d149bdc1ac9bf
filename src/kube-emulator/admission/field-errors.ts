// Field errors as apimachinery writes them (pkg/util/validation/field/errors.go at v0.32.4): the
// cause `reason` is the ErrorType, the `message` is ErrorBody(): the type's text, the bad value
// printed as Go prints it (strings quoted, numbers and booleans bare, anything else `%#v`), then
// the detail. Every validation rule of admission/ builds its causes here.
import type { StatusCause } from '../status-errors.ts';

/** A value as ErrorBody prints it: `%q` for strings, `%v` for numbers and booleans. */
export function goValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((item) => typeof item === 'string'))
    return `[]string{${value.map(goQuote).join(', ')}}`;
  return JSON.stringify(value);
}

/** strconv.Quote for the strings validation meets (JSON's escapes, as Go's %q for ASCII). */
export function goQuote(text: string): string {
  return JSON.stringify(text);
}

export function invalidCause(field: string, value: unknown, detail: string): StatusCause {
  return {
    reason: 'FieldValueInvalid',
    field,
    message: `Invalid value: ${goValue(value)}${detail === '' ? '' : `: ${detail}`}`,
  };
}

/** Invalid with a value printed as given (`0x0` for a uint64 zero, an IntOrString's String()). */
export function invalidRawCause(field: string, printed: string, detail: string): StatusCause {
  return { reason: 'FieldValueInvalid', field, message: `Invalid value: ${printed}: ${detail}` };
}

export function requiredCause(field: string, detail = ''): StatusCause {
  return {
    reason: 'FieldValueRequired',
    field,
    message: `Required value${detail === '' ? '' : `: ${detail}`}`,
  };
}

export function forbiddenCause(field: string, detail: string): StatusCause {
  return { reason: 'FieldValueForbidden', field, message: `Forbidden: ${detail}` };
}

export function duplicateCause(field: string, value: unknown): StatusCause {
  return { reason: 'FieldValueDuplicate', field, message: `Duplicate value: ${goValue(value)}` };
}

/** field.TooLong: the value is never printed. */
export function tooLongCause(field: string, maxBytes: number): StatusCause {
  return {
    reason: 'FieldValueTooLong',
    field,
    message: `Too long: may not be more than ${maxBytes} bytes`,
  };
}

export function notSupportedCause(
  field: string,
  value: unknown,
  supported: readonly string[],
): StatusCause {
  return {
    reason: 'FieldValueNotSupported',
    field,
    message: `Unsupported value: ${goValue(value)}: supported values: ${supported.map(goQuote).join(', ')}`,
  };
}

/** apimachinery's ValidateImmutableField: "field is immutable". */
export function immutableCause(field: string, value: unknown): StatusCause {
  return invalidCause(field, value, 'field is immutable');
}

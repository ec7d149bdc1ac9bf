// A chain's validator ids, read off the data its definition declares (`IdFormatSpec`, model.ts):
// the manager (discovery, the key store, static files) and the debug CLI (from `GET /v1/chain`)
// build the same reading from the same data, so `4` names the same id on both sides.
import type { IdFormat, IdFormatSpec, ValidatorId } from './model.ts';

/** Escapes `text` for a regular expression. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The ids of `spec`; throws a RangeError for a spec that names no id. */
export function idFormatOf(spec: IdFormatSpec): IdFormat {
  const { prefix, width, min, max } = spec;
  if (!(Number.isSafeInteger(min) && Number.isSafeInteger(max) && min >= 0 && min <= max))
    throw new RangeError(`an id range needs 0 <= min <= max, got ${min}…${max}`);
  if (!(Number.isInteger(width) && width >= 0 && width <= 18))
    throw new RangeError(`an id width is 0 to 18 digits, got ${width}`);
  if (!/^[A-Za-z0-9._-]*$/.test(prefix))
    throw new RangeError(`an id prefix is letters, digits, '.', '_' and '-', got ${prefix}`);
  // The most digits a person writes for a number of the range ("005" and "5" for Pocket's 5).
  const digits = Math.max(width, String(max).length);
  const shape = new RegExp(`^${literal(prefix)}(\\d{1,${digits}})$`);
  const written = new RegExp(`^(?:${literal(prefix)})?(\\d{1,${digits}})$`);
  const fromNumber = (n: number): ValidatorId | undefined =>
    Number.isInteger(n) && n >= min && n <= max
      ? `${prefix}${String(n).padStart(width, '0')}`
      : undefined;
  return {
    fromNumber,
    // "5", "05", "005" (and "val-5" or "5" with a prefix) name the same id; more digits than an
    // id of the range has, or anything else, name none.
    fromText: (text) => {
      const number = written.exec(text)?.[1];
      return number === undefined ? undefined : fromNumber(Number(number));
    },
    // As the key store always picked them: the shape of an id ("000" too, reported as it parses).
    isId: (name) => {
      const number = shape.exec(name)?.[1];
      return number !== undefined && String(Number(number)).padStart(width, '0') === number;
    },
    range: { min, max },
    example: fromNumber(Math.min(max, min + 4)) ?? `${prefix}${min}`,
    spec: { prefix, width, min, max },
  };
}

// Field selectors: `=`, `==` and `!=` over a per-kind whitelist of fields.
import { badRequest } from '../status-errors.ts';

export interface FieldRequirement {
  field: string;
  value: string;
  negated: boolean;
}

export type FieldSelector = readonly FieldRequirement[];

/** Splits on a separator that is not escaped with a backslash. */
function splitUnescaped(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i] ?? '';
    if (char === '\\' && i + 1 < text.length) {
      current += char + (text[i + 1] ?? '');
      i++;
    } else if (char === separator) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts;
}

function unescape(value: string): string {
  return value.replace(/\\(.)/g, '$1');
}

/**
 * Parses `?fieldSelector=` against the fields `supported` for the kind. A field outside the
 * list gets 400 `field label not supported: x`, as a real apiserver answers.
 */
export function parseFieldSelector(
  text: string | undefined,
  supported: ReadonlySet<string>,
): FieldSelector {
  if (text === undefined || text.trim() === '') return [];
  return splitUnescaped(text, ',').map((part) => {
    const match = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/s.exec(part.trim());
    if (match?.[1] === undefined || match[3] === undefined) {
      throw badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    }
    const field = match[1].trim();
    if (!supported.has(field)) throw badRequest(`field label not supported: ${field}`);
    return { field, value: unescape(match[3]), negated: match[2] === '!=' };
  });
}

/** Whether an object, whose field values `valueOf` reads, satisfies every requirement. */
export function matchesFields(
  selector: FieldSelector,
  valueOf: (field: string) => string,
): boolean {
  return selector.every(
    (requirement) => (valueOf(requirement.field) === requirement.value) !== requirement.negated,
  );
}

// Label selectors as Kubernetes parses them, to match objects that are not listed by selector
// (a StatefulSet's pod template against the validator pod selector).

type Requirement =
  | { op: 'eq' | 'neq'; key: string; value: string }
  | { op: 'in' | 'notin'; key: string; values: readonly string[] }
  | { op: 'exists' | 'absent'; key: string };

export type LabelMatcher = (labels: Readonly<Record<string, string>> | undefined) => boolean;

const KEY = String.raw`[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?`;
const VALUE = String.raw`([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?`;
const EQ_RE = new RegExp(`^(${KEY})\\s*(==|=|!=)\\s*(${VALUE})$`);
const SET_RE = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^)]*)\\)$`);
const EXISTS_RE = new RegExp(`^(!)?\\s*(${KEY})$`);

/** Splits on commas that are not inside parentheses. */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of selector) {
    if (char === '(') depth++;
    if (char === ')') depth--;
    if (char === ',' && depth === 0) {
      terms.push(current.trim());
      current = '';
    } else {
      current += char;
    }
  }
  if (current.trim() !== '') terms.push(current.trim());
  return terms;
}

function parseTerm(term: string): Requirement {
  let match = EQ_RE.exec(term);
  if (match?.[1] !== undefined) {
    return { op: match[3] === '!=' ? 'neq' : 'eq', key: match[1], value: match[4] ?? '' };
  }
  match = SET_RE.exec(term);
  if (match?.[1] !== undefined) {
    const values = (match[4] ?? '').split(',').map((v) => v.trim());
    return { op: match[3] === 'notin' ? 'notin' : 'in', key: match[1], values };
  }
  match = EXISTS_RE.exec(term);
  if (match?.[2] !== undefined)
    return { op: match[1] === '!' ? 'absent' : 'exists', key: match[2] };
  throw new SyntaxError(`unable to parse label requirement ${JSON.stringify(term)}`);
}

/** Compiles a selector string ("a=b,c in (d,e),!f"); throws `SyntaxError` when it does not parse. */
export function compileLabelSelector(selector: string): LabelMatcher {
  const requirements = splitTerms(selector).map(parseTerm);
  return (labels) =>
    requirements.every((req) => {
      const has = labels !== undefined && Object.hasOwn(labels, req.key);
      const value = has ? labels[req.key] : undefined;
      switch (req.op) {
        case 'eq':
          return value === req.value;
        case 'neq':
          return value !== req.value;
        case 'in':
          return value !== undefined && req.values.includes(value);
        case 'notin':
          return value === undefined || !req.values.includes(value);
        case 'exists':
          return has;
        case 'absent':
          return !has;
      }
    });
}

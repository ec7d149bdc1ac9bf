// Label selectors: the string grammar of `?labelSelector=` and the structured form of specs.
import { badRequest } from '../status-errors.ts';

export type LabelRequirement =
  | { key: string; op: 'in' | 'notin'; values: readonly string[] }
  | { key: string; op: 'exists' | '!' }
  | { key: string; op: 'gt' | 'lt'; value: number };

/** A parsed selector: every requirement must hold (comma means AND). Empty matches everything. */
export type LabelSelector = readonly LabelRequirement[];

export type Labels = Readonly<Record<string, string>> | undefined;

const NAME = '[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?';
const KEY = `(?:[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?/)?${NAME}`;
const VALUE = `(?:${NAME})?`;
const keyOnly = new RegExp(`^(${KEY})$`);
const notExists = new RegExp(`^!\\s*(${KEY})$`);
const setBased = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^()]*)\\)$`);
const equality = new RegExp(`^(${KEY})\\s*(==|=|!=)\\s*(${VALUE})$`);
const numeric = new RegExp(`^(${KEY})\\s*(>|<)\\s*(-?\\d+)$`);
const valuePattern = new RegExp(`^${VALUE}$`);

/** Splits on commas that are not inside parentheses. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '(') depth++;
    else if (char === ')') depth--;
    else if (char === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

function parseRequirement(raw: string, whole: string): LabelRequirement {
  const text = raw.trim();
  const fail = () =>
    badRequest(`unable to parse requirement: found '${text}', in selector '${whole}'`);
  let match = notExists.exec(text);
  if (match?.[1] !== undefined) return { key: match[1], op: '!' };
  match = setBased.exec(text);
  if (match?.[1] !== undefined && match[3] !== undefined) {
    const values = match[3].split(',').map((value) => value.trim());
    if (!values.every((value) => valuePattern.test(value))) throw fail();
    return { key: match[1], op: match[2] === 'in' ? 'in' : 'notin', values };
  }
  match = equality.exec(text);
  if (match?.[1] !== undefined && match[3] !== undefined) {
    return { key: match[1], op: match[2] === '!=' ? 'notin' : 'in', values: [match[3]] };
  }
  match = numeric.exec(text);
  if (match?.[1] !== undefined && match[3] !== undefined) {
    return { key: match[1], op: match[2] === '>' ? 'gt' : 'lt', value: Number(match[3]) };
  }
  match = keyOnly.exec(text);
  if (match?.[1] !== undefined) return { key: match[1], op: 'exists' };
  throw fail();
}

/** Parses `?labelSelector=`; a string that does not parse throws a 400 BadRequest. */
export function parseLabelSelector(text: string | undefined): LabelSelector {
  if (text === undefined || text.trim() === '') return [];
  return splitTopLevel(text).map((part) => parseRequirement(part, text));
}

function holds(requirement: LabelRequirement, labels: Labels): boolean {
  const value = labels?.[requirement.key];
  switch (requirement.op) {
    case 'in':
      return value !== undefined && requirement.values.includes(value);
    case 'notin':
      return value === undefined || !requirement.values.includes(value);
    case 'exists':
      return value !== undefined;
    case '!':
      return value === undefined;
    case 'gt':
    case 'lt': {
      if (value === undefined || !/^-?\d+$/.test(value)) return false;
      const number = Number(value);
      return requirement.op === 'gt' ? number > requirement.value : number < requirement.value;
    }
  }
}

export function matchesLabels(selector: LabelSelector, labels: Labels): boolean {
  return selector.every((requirement) => holds(requirement, labels));
}

/** The structured selector of a spec (`matchLabels` + `matchExpressions`). */
export interface StructuredSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** Converts a structured selector; unknown operators throw (validation reports them). */
export function fromStructured(selector: StructuredSelector | undefined): LabelSelector {
  const requirements: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) {
    requirements.push({ key, op: 'in', values: [value] });
  }
  for (const expression of selector?.matchExpressions ?? []) {
    const { key, operator } = expression;
    const values = expression.values ?? [];
    if (operator === 'In') requirements.push({ key, op: 'in', values });
    else if (operator === 'NotIn') requirements.push({ key, op: 'notin', values });
    else if (operator === 'Exists') requirements.push({ key, op: 'exists' });
    else if (operator === 'DoesNotExist') requirements.push({ key, op: '!' });
    else throw new Error(`not a valid selector operator: ${operator}`);
  }
  return requirements;
}

/** The string form (`app=web,tier in (a,b)`), as a Scale's `status.selector` carries it. */
export function selectorToString(selector: LabelSelector): string {
  return selector
    .map((requirement) => {
      switch (requirement.op) {
        case 'in':
          return requirement.values.length === 1
            ? `${requirement.key}=${requirement.values[0] ?? ''}`
            : `${requirement.key} in (${requirement.values.join(',')})`;
        case 'notin':
          return requirement.values.length === 1
            ? `${requirement.key}!=${requirement.values[0] ?? ''}`
            : `${requirement.key} notin (${requirement.values.join(',')})`;
        case 'exists':
          return requirement.key;
        case '!':
          return `!${requirement.key}`;
        case 'gt':
          return `${requirement.key}>${requirement.value}`;
        case 'lt':
          return `${requirement.key}<${requirement.value}`;
      }
    })
    .join(',');
}

// How a setting is declared, read and documented: a TypeBox schema per setting whose `x-source`
// annotation names its environment variable, flag, text form, default and description. The core's
// settings (config.ts's ConfigSchema) and each chain's own (its definition, chain/registry.ts) are
// declared with these helpers, read by the same loop and documented by the same generator
// (scripts/config-docs.ts). A chain's settings are namespaced (`CM_POCKET_V1_…`,
// `--pocket-v1-…`); a setting may keep an older name as a documented alias.
import { Type, type TSchema } from 'typebox';
import { maskUrlCredentials } from './url-credentials.ts';

/** How a setting's text is read (and shown in docs/configuration.md). */
export type Kind =
  | 'string'
  | 'int'
  | 'duration'
  | 'bool'
  | 'url'
  | 'path'
  | 'regex'
  | 'amount'
  | 'list'
  | 'size'
  | `enum:${string}`;

/** An older name a setting still answers to (documented beside it). */
export interface Alias {
  readonly env: string;
  readonly flag: string;
}

/** Where a setting comes from and how it is documented; kept on its schema under `x-source`. */
export interface Source {
  env: string;
  flag: string;
  description: string;
  /** The text used when neither the flag nor the variable is set. */
  default?: string;
  required?: boolean;
  /** Never logged, never echoed in an error. */
  secret?: boolean;
  /** Unset, the loader derives it (so the value is never undefined). */
  derived?: boolean;
  minimum?: number;
  maximum?: number;
  /** A path that must be absolute (a file given to a program that runs elsewhere). */
  absolute?: boolean;
  /** An amount's unit (the chain's smallest): the text may end with it; it is shown with the amount. */
  denomination?: string;
  /** The older name it answers to, when the new one is unset. */
  alias?: Alias;
}

/** One row of a settings table: the schema's annotations, flattened (docs, flags, parsing). */
export interface Setting<K extends string = string> {
  key: K;
  env: string;
  flag: string;
  kind: Kind;
  default?: string;
  required?: boolean;
  secret?: boolean;
  absolute?: boolean;
  denomination?: string;
  min?: number;
  max?: number;
  alias?: Alias;
  description: string;
}

const SOURCE = 'x-source';
type Annotated = { [SOURCE]: Source & { kind: Kind } };

function annotate(kind: Kind, source: Source): Annotated & { description: string } {
  const range = { minimum: source.minimum, maximum: source.maximum };
  return {
    [SOURCE]: { ...source, kind },
    description: source.description,
    ...Object.fromEntries(Object.entries(range).filter(([, v]) => v !== undefined)),
  };
}

export const text = (source: Source) => Type.String(annotate('string', source));
export const path = (source: Source) => Type.String(annotate('path', source));
export const url = (source: Source) => Type.String(annotate('url', source));
/** A positive whole number of the chain's smallest unit, kept as text (it passes 2^53). */
export const amount = (source: Source & { denomination: string }) =>
  Type.String(annotate('amount', source));
export const integer = (source: Source) => Type.Integer(annotate('int', source));
/** Milliseconds, written as `500ms`, `30s`, `2m`, `1h` or a bare number of ms. */
export const duration = (source: Source) => Type.Integer(annotate('duration', source));
export const boolean = (source: Source) => Type.Boolean(annotate('bool', source));
/** A RegExp instance: JSON Schema has no such type, so a refinement checks it (`Value.Check`, config-check.ts). */
export const regex = (source: Source) =>
  Type.Refine(Type.Unsafe<RegExp>(annotate('regex', source)), (value) => value instanceof RegExp);
export const list = (source: Source) =>
  Type.Unsafe<readonly string[]>(Type.Array(Type.String(), annotate('list', source)));
/** `auto`, or a whole number up to `maximum`. */
export const size = (source: Source) =>
  Type.Union(
    [
      Type.Integer({
        minimum: 0,
        ...(source.maximum === undefined ? {} : { maximum: source.maximum }),
      }),
      Type.Literal('auto'),
    ],
    annotate('size', source),
  );
export const oneOf = <const V extends readonly string[]>(values: V, source: Source) =>
  Type.Unsafe<V[number]>(
    Type.Union(
      values.map((v) => Type.Literal(v)),
      annotate(`enum:${values.join('|')}`, source),
    ),
  );
/** A setting with no default: undefined when unset. */
export const maybe = <T extends TSchema>(schema: T) =>
  Type.Union([schema, Type.Undefined()], { [SOURCE]: (schema as unknown as Annotated)[SOURCE] });

/** The settings table of a schema's properties, in their order. */
export function settingsOf<K extends string>(
  properties: Readonly<Record<K, TSchema>>,
): readonly Setting<K>[] {
  return (Object.entries(properties) as [K, TSchema][]).map(([key, schema]) => {
    const {
      kind,
      env,
      flag,
      description,
      derived: _derived,
      ...source
    } = (schema as unknown as Annotated)[SOURCE];
    const optional = Object.entries({
      default: source.default,
      required: source.required === true ? true : undefined,
      secret: source.secret === true ? true : undefined,
      absolute: source.absolute === true ? true : undefined,
      denomination: source.denomination,
      min: source.minimum,
      max: source.maximum,
      alias: source.alias,
    }).filter(([, value]) => value !== undefined);
    return { key, env, flag, kind, ...Object.fromEntries(optional), description };
  });
}

/** Where settings are read from: flags (by flag name, without dashes) win over the environment. */
export interface SettingsInput {
  readonly env: NodeJS.ProcessEnv;
  readonly flags?: Readonly<Record<string, string | undefined>> | undefined;
}

/** What reading a table gave: the values by key, and every problem, each naming its variable. */
export interface SettingsRead {
  readonly values: Record<string, unknown>;
  readonly problems: string[];
  /** Keys whose text was refused (a check that combines settings leaves them out). */
  readonly refused: ReadonlySet<string>;
  /** One notice per setting read under its older name (an alias): which name replaces it. */
  readonly renamed: string[];
}

/** The text of one setting and the name it came under (its flag, its variable, or an alias's). */
function rawOf(
  setting: Setting,
  input: SettingsInput,
): { raw: string | undefined; name: string; clash?: string } {
  const candidates: (readonly [string, string | undefined])[] = [
    [`--${setting.flag}`, input.flags?.[setting.flag]],
    [setting.env, input.env[setting.env]],
  ];
  if (setting.alias !== undefined) {
    candidates.splice(1, 0, [`--${setting.alias.flag}`, input.flags?.[setting.alias.flag]]);
    candidates.push([setting.alias.env, input.env[setting.alias.env]]);
  }
  const given = candidates.filter(([, value]) => value !== undefined && value !== '');
  const [first, second] = given;
  if (first === undefined) return { raw: setting.default, name: setting.env };
  // A new name and its alias both set, to different values: which one is meant is not known.
  const clash =
    second !== undefined &&
    second[1] !== first[1] &&
    first[0].startsWith('--') === second[0].startsWith('--')
      ? `${first[0]} and ${second[0]} (its alias) are both set, to different values; set one`
      : undefined;
  return { raw: first[1], name: first[0], ...(clash === undefined ? {} : { clash }) };
}

/** Reads every setting of `settings`; collects the problems instead of throwing. */
export function readSettings(settings: readonly Setting[], input: SettingsInput): SettingsRead {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  const refused = new Set<string>();
  const renamed: string[] = [];
  for (const setting of settings) {
    const { raw, name, clash } = rawOf(setting, input);
    const { alias } = setting;
    if (alias !== undefined && (name === alias.env || name === `--${alias.flag}`))
      renamed.push(
        `${name} is deprecated: it is read as ${name.startsWith('--') ? `--${setting.flag}` : setting.env}, the name to use`,
      );
    if (clash !== undefined) {
      problems.push(clash);
      refused.add(setting.key);
      continue;
    }
    if (raw === undefined || raw === '') {
      if (setting.required === true)
        problems.push(`${setting.env} is required: ${setting.description}`);
      values[setting.key] = undefined;
      continue;
    }
    const parsed = parseValue(setting, raw);
    if (typeof parsed === 'object' && 'problem' in parsed) {
      problems.push(`${name}: ${parsed.problem}`);
      refused.add(setting.key);
    } else {
      values[setting.key] = parsed;
    }
  }
  return { values, problems, refused, renamed };
}

type Parsed = string | number | boolean | RegExp | readonly string[] | { problem: string };

const SIMPLE: Partial<Record<Kind, (setting: Setting, raw: string, shown: string) => Parsed>> = {
  string: (_setting, raw) => raw,
  int: (setting, raw, shown) =>
    /^-?\d+$/.test(raw)
      ? checkRange(setting, Number(raw), shown)
      : { problem: `expected an integer, got ${shown}` },
  duration: (setting, raw, shown) => {
    const ms = parseDuration(raw);
    if (ms === undefined)
      return { problem: `expected a duration such as 500ms, 30s or 2m, got ${shown}` };
    return checkRange(setting, ms, shown);
  },
  bool: (_setting, raw, shown) => {
    if (['true', '1', 'yes'].includes(raw)) return true;
    if (['false', '0', 'no'].includes(raw)) return false;
    return { problem: `expected true or false, got ${shown}` };
  },
  url: (setting, raw, shown) => parseUrl(setting, raw, shown),
  // A program run in a private temporary folder needs its files by absolute path.
  path: (setting, raw, shown) =>
    setting.absolute === true && !raw.startsWith('/')
      ? { problem: `expected an absolute path, got ${shown}` }
      : raw,
  regex: (_setting, raw, shown) => {
    try {
      return new RegExp(raw);
    } catch {
      return { problem: `expected a regular expression, got ${shown}` };
    }
  },
  amount: (setting, raw, shown) => parseAmount(setting, raw, shown),
  size: (setting, raw, shown) => {
    if (raw === 'auto') return raw;
    if (!/^\d+$/.test(raw)) return { problem: `expected "auto" or a whole number, got ${shown}` };
    return checkRange(setting, Number(raw), shown);
  },
  list: (_setting, raw, shown) => {
    const items = raw
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
    if (items.length === 0) return { problem: `expected a comma-separated list, got ${shown}` };
    return items;
  },
};

function parseValue(setting: Setting, raw: string): Parsed {
  const shown = setting.secret === true ? '(hidden)' : JSON.stringify(raw);
  const simple = SIMPLE[setting.kind];
  if (simple !== undefined) return simple(setting, raw, shown);
  const allowed = setting.kind.slice('enum:'.length).split('|');
  if (!allowed.includes(raw))
    return { problem: `expected one of ${allowed.join(', ')}, got ${shown}` };
  return raw;
}

function parseUrl(setting: Setting, raw: string, shown: string): Parsed {
  // A password in a URL would show in the log, in /readyz's lastError and in every chain
  // error: it is refused, and never echoed (what sits between `//` and `@` is masked).
  const masked = setting.secret === true ? shown : JSON.stringify(maskUrlCredentials(raw));
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return { problem: `expected an http(s) URL, got ${masked}` };
    if (url.username !== '' || url.password !== '')
      return {
        problem: `a URL with credentials (user:password@) is refused, got ${masked}: they would be shown in logs and /readyz`,
      };
    return url.href.replace(/\/+$/, '');
  } catch {
    return { problem: `expected an http(s) URL, got ${masked}` };
  }
}

/** A whole number of the smallest unit, bare or followed by the setting's denomination. */
function parseAmount(setting: Setting, raw: string, shown: string): Parsed {
  const unit = setting.denomination ?? '';
  const match = /^([0-9]+)\s*([A-Za-z][A-Za-z0-9/]*)?$/.exec(raw.trim());
  const digits = match?.[1];
  const written = match?.[2];
  if (
    digits === undefined ||
    !/^[1-9]\d*$/.test(digits) ||
    (written !== undefined && written !== unit)
  )
    return {
      problem: `expected a positive whole amount of ${unit} (e.g. 150000000001 or 150000000001${unit}), got ${shown}`,
    };
  return digits;
}

function checkRange(setting: Setting, value: number, shown: string): Parsed {
  // A duration's bounds are kept in ms: shown as the setting is written ("1s", not "1000").
  const bound = (n: number): string => (setting.kind === 'duration' ? formatBound(n) : String(n));
  if (setting.min !== undefined && value < setting.min)
    return { problem: `must be at least ${bound(setting.min)}, got ${shown}` };
  if (setting.max !== undefined && value > setting.max)
    return { problem: `must be at most ${bound(setting.max)}, got ${shown}` };
  return value;
}

/** A bound in ms as a duration is written: the largest unit that divides it ("2m", "1500ms"). */
function formatBound(ms: number): string {
  const [unit, size] = Object.entries(UNITS)
    .sort(([, a], [, b]) => b - a)
    .find(([, size]) => ms !== 0 && ms % size === 0) ?? ['ms', 1];
  return `${ms / size}${unit}`;
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** Parses "250ms", "30s", "2m", "1h" (or a bare number of milliseconds). */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (match?.[1] === undefined) return undefined;
  return Math.round(Number(match[1]) * (UNITS[match[2] ?? 'ms'] ?? 1));
}

/** Settings as they may be logged: secrets replaced, regexes as source. */
export function redactedSettings(
  settings: readonly Setting[],
  values: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const setting of settings) {
    const value = values[setting.key];
    out[setting.key] =
      setting.secret === true && value !== undefined
        ? '(set)'
        : value instanceof RegExp
          ? value.source
          : value;
  }
  return out;
}

// The check of a built configuration against its TypeBox schema (ConfigSchema), without TypeBox's
// `Value` module: importing `typebox/value` at start loaded about 300 more modules and 7 MiB of
// resident memory for one check that only ever fails on a bug in config.ts (ADR 0020). This reads
// the few JSON Schema keywords ConfigSchema is made of; any other keyword throws, so a schema that
// grows one cannot pass unchecked (a unit test compares every verdict with `Value.Check`).

/** A schema node as TypeBox builds it: plain JSON Schema, plus the refinements of `Type.Refine`. */
interface Node {
  readonly type?: string;
  readonly const?: unknown;
  readonly anyOf?: readonly Node[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly items?: Node;
  readonly properties?: Readonly<Record<string, Node>>;
  readonly required?: readonly string[];
  /** Type.Refine's checks (a non-enumerable property). */
  readonly '~refine'?: readonly {
    check: (value: unknown) => boolean;
    error: (value: unknown) => string;
  }[];
}

/** Keywords that constrain nothing: annotations (ours under `x-source`, and the docs). */
const ANNOTATIONS = new Set(['description', 'x-source', 'default', 'title']);
const KEYWORDS = new Set([
  'type',
  'const',
  'anyOf',
  'minimum',
  'maximum',
  'items',
  'properties',
  'required',
]);

/** Where a value breaks its schema, in the words of TypeBox's `Value.Errors` (en_US). */
export interface SchemaError {
  instancePath: string;
  message: string;
}

/**
 * The first place where `value` breaks `schema`, or undefined when it conforms. Agrees with
 * TypeBox's `Value.Check` on the keywords read here; throws on any other keyword.
 */
export function firstSchemaError(
  schema: unknown,
  value: unknown,
  path = '',
): SchemaError | undefined {
  const node = schema as Node;
  for (const key of Object.keys(node))
    if (!KEYWORDS.has(key) && !ANNOTATIONS.has(key))
      throw new Error(
        `config-check.ts does not read the schema keyword "${key}" (at ${path || '/'})`,
      );
  const message = ownError(node, value);
  if (message !== undefined) return { instancePath: path, message };
  const nested = nestedError(node, value, path);
  if (nested !== undefined) return nested;
  for (const refinement of node['~refine'] ?? [])
    if (!refinement.check(value)) return { instancePath: path, message: refinement.error(value) };
  return undefined;
}

/** The keywords about the value itself (not its items or properties), in TypeBox's order. */
function ownError(node: Node, value: unknown): string | undefined {
  if (node.type !== undefined && !hasType(node.type, value)) return `must be ${node.type}`;
  if ('const' in node && value !== node.const) return 'must be equal to constant';
  if (typeof value === 'number') {
    if (node.minimum !== undefined && !(value >= node.minimum)) return `must be >= ${node.minimum}`;
    if (node.maximum !== undefined && !(value <= node.maximum)) return `must be <= ${node.maximum}`;
  }
  if (node.anyOf?.every((s) => firstSchemaError(s, value) !== undefined) === true)
    return 'must match a schema in anyOf';
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const missing = (node.required ?? []).filter((key) => !(key in value));
    if (missing.length > 0) return `must have required properties ${missing.join(', ')}`;
  }
  return undefined;
}

/** The first error of an array's items or an object's properties. */
function nestedError(node: Node, value: unknown, path: string): SchemaError | undefined {
  if (node.items !== undefined && Array.isArray(value))
    for (const [i, item] of value.entries()) {
      const found = firstSchemaError(node.items, item, `${path}/${i}`);
      if (found !== undefined) return found;
    }
  if (node.properties !== undefined && typeof value === 'object' && value !== null)
    for (const [key, property] of Object.entries(node.properties))
      if (key in value) {
        const found = firstSchemaError(
          property,
          (value as Record<string, unknown>)[key],
          `${path}/${key}`,
        );
        if (found !== undefined) return found;
      }
  return undefined;
}

function hasType(type: string, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'integer':
      return Number.isInteger(value);
    case 'undefined':
      return value === undefined;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default:
      throw new Error(`config-check.ts does not read the schema type "${type}"`);
  }
}

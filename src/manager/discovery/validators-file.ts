// The validators file of static discovery (`--validators-file`, YAML or JSON):
// `validators: [{id: "005", rpc: "http://host:port", serviceUrl: "host:port", hold: false}, …]`.
// Listed means wanted. Every problem is reported together, each naming the entry and the field.
import { parse } from 'yaml';
import type { IdFormat, ValidatorId } from '../model.ts';
import { maskUrlCredentials } from '../url-credentials.ts';
import { DiscoveryFileCode, DiscoveryFileError, isRecord } from './discovery-file-error.ts';

export interface StaticValidator {
  readonly id: ValidatorId;
  /** `http(s)://host:port` of the node's own RPC (asked for its health and height). */
  readonly rpc: string;
  /** `host:port` the validator stakes with. */
  readonly serviceUrl: string;
  /** Like the hold annotation on a pod: the manager leaves this validator alone. */
  readonly hold: boolean;
}

const FIELDS = new Set(['id', 'rpc', 'serviceUrl', 'hold']);
/** `host:port`: a host name, an IPv4 address or a bracketed IPv6 address, and a port. */
const SERVICE_URL_RE = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}))?:(\d{1,5})$/;

/** Parses and checks the file's text; throws DiscoveryFileError listing every problem. */
export function parseValidatorsFile(path: string, text: string, ids: IdFormat): StaticValidator[] {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error: unknown) {
    throw invalid(path, [`not YAML or JSON: ${firstLine(error)}`]);
  }
  // An empty or cut-off file (`validators:` with nothing after it) is not "no validators": that
  // would unstake them all. `validators: []` says it on purpose.
  if (!isRecord(document) || !Array.isArray(document.validators))
    throw invalid(path, [
      'expected an object with a "validators" list (write `validators: []` for none)',
    ]);
  const problems: string[] = [];
  for (const key of Object.keys(document))
    if (key !== 'validators') problems.push(`unknown top-level field "${key}"`);
  const out: StaticValidator[] = [];
  const seen = { id: new Map<string, number>(), rpc: new Map<string, number>() };
  const serviceUrls = new Map<string, number>();
  document.validators.forEach((raw: unknown, index: number) => {
    const entry = parseEntry(raw, `validators[${index}]`, problems, ids);
    if (entry === undefined) return;
    const where = `validators[${index}] (${entry.id})`;
    const clash = (map: Map<string, number>, value: string, what: string): boolean => {
      const first = map.get(value);
      if (first !== undefined) {
        problems.push(`${where}: ${what} ${value} is also that of validators[${first}]`);
        return true;
      }
      map.set(value, index);
      return false;
    };
    const duplicate = [
      clash(seen.id, entry.id, 'id'),
      clash(seen.rpc, entry.rpc, 'rpc'),
      clash(serviceUrls, entry.serviceUrl, 'serviceUrl'),
    ].some(Boolean);
    if (!duplicate) out.push(entry);
  });
  if (problems.length > 0) throw invalid(path, problems);
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

function parseEntry(
  raw: unknown,
  where: string,
  problems: string[],
  ids: IdFormat,
): StaticValidator | undefined {
  if (!isRecord(raw)) {
    problems.push(`${where}: expected an object`);
    return undefined;
  }
  const before = problems.length;
  for (const key of Object.keys(raw))
    if (!FIELDS.has(key)) problems.push(`${where}: unknown field "${key}"`);
  const id = idOf(raw.id, ids);
  if (id === undefined)
    problems.push(
      `${where}: "id" must be a validator id ${ids.range.min}…${ids.range.max} ("${ids.example}" or ${Number(ids.example)}), got ${shown(raw.id)}`,
    );
  const label = id === undefined ? where : `${where} (${id})`;
  const rpc = rpcOf(raw.rpc);
  if (rpc === undefined)
    problems.push(
      `${label}: "rpc" must be the node's http(s)://host:port, without credentials, got ${shown(typeof raw.rpc === 'string' ? maskUrlCredentials(raw.rpc) : raw.rpc)}`,
    );
  const serviceUrl = serviceUrlOf(raw.serviceUrl);
  if (serviceUrl === undefined)
    problems.push(`${label}: "serviceUrl" must be host:port, got ${shown(raw.serviceUrl)}`);
  if (raw.hold !== undefined && typeof raw.hold !== 'boolean')
    problems.push(`${label}: "hold" must be true or false, got ${shown(raw.hold)}`);
  if (problems.length > before || id === undefined || rpc === undefined || serviceUrl === undefined)
    return undefined;
  return { id, rpc, serviceUrl, hold: raw.hold === true };
}

function idOf(value: unknown, ids: IdFormat): ValidatorId | undefined {
  if (typeof value === 'number') return ids.fromNumber(value);
  if (typeof value === 'string') return ids.fromText(value);
  return undefined;
}

function rpcOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    return undefined;
  return url.href.replace(/\/+$/, '');
}

function serviceUrlOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const port = SERVICE_URL_RE.exec(value)?.[1];
  if (port === undefined || value.startsWith(':')) return undefined;
  const n = Number(port);
  return n >= 1 && n <= 65_535 ? value : undefined;
}

/** A value as it may appear in a problem (short; this file holds no secrets). */
function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = typeof value === 'function' ? 'a function' : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}

function invalid(path: string, problems: string[]): DiscoveryFileError {
  return new DiscoveryFileError(DiscoveryFileCode.validatorsInvalid, path, problems);
}

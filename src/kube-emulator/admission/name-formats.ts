// The string formats of apimachinery's pkg/util/validation/validation.go (v0.32.4), with its
// messages word for word: qualified names (label and annotation keys), label values, DNS-1123
// labels and subdomains, ConfigMap and Secret keys.

/** RegexError: the message, the examples and the regular expression used. */
function regexError(message: string, format: string, ...examples: string[]): string {
  if (examples.length === 0) return `${message} (regex used for validation is '${format}')`;
  return `${message} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${format}')`;
}

export const maxLenError = (length: number): string => `must be no more than ${length} characters`;
const EMPTY = 'must be non-empty';

const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const qualifiedName = new RegExp(`^${QUALIFIED_NAME_FMT}$`);

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/** IsDNS1123Label. */
export function isDns1123Label(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push(maxLenError(63));
  if (!new RegExp(`^${DNS1123_LABEL_FMT}$`).test(value)) {
    // A valid subdomain that is no label (the length was checked): it has dots.
    if (new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`).test(value)) errors.push('must not contain dots');
    else errors.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errors;
}

/** IsDNS1123Subdomain. */
export function isDns1123Subdomain(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 253) errors.push(maxLenError(253));
  if (!new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`).test(value))
    errors.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errors;
}

/** IsQualifiedName: `[prefix/]name`, the format of label and annotation keys. */
export function isQualifiedName(value: string): string[] {
  const errors: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) name = parts[0] ?? '';
  else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix === '') errors.push(`prefix part ${EMPTY}`);
    else errors.push(...isDns1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name === '') errors.push(`name part ${EMPTY}`);
  else if (name.length > 63) errors.push(`name part ${maxLenError(63)}`);
  if (!qualifiedName.test(name))
    errors.push(
      `name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`,
    );
  return errors;
}

const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** IsValidLabelValue. */
export function isValidLabelValue(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push(maxLenError(63));
  if (!new RegExp(`^${LABEL_VALUE_FMT}$`).test(value))
    errors.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errors;
}

const CONFIG_KEY_FMT = '[-._a-zA-Z0-9]+';
const CONFIG_KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";

/** IsConfigMapKey (ConfigMap and Secret keys). */
export function isConfigMapKey(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 253) errors.push(maxLenError(253));
  if (!new RegExp(`^${CONFIG_KEY_FMT}$`).test(value))
    errors.push(regexError(CONFIG_KEY_MSG, CONFIG_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  if (value === '.') errors.push("must not be '.'");
  else if (value === '..') errors.push("must not be '..'");
  else if (value.startsWith('..')) errors.push("must not start with '..'");
  return errors;
}

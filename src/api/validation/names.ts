// Name and label syntax checks, as upstream apimachinery pkg/util/validation. Each returns the
// list of upstream messages (empty when valid), to be wrapped in an `invalid` cause.

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QNAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QNAME_FMT})?`;

const full = (fmt: string): RegExp => new RegExp(`^${fmt}$`);
const DNS1123_LABEL_RE = full(DNS1123_LABEL_FMT);
const DNS1123_SUBDOMAIN_RE = full(DNS1123_SUBDOMAIN_FMT);
const DNS1035_LABEL_RE = full(DNS1035_LABEL_FMT);
const QNAME_RE = full(QNAME_FMT);
const LABEL_VALUE_RE = full(LABEL_VALUE_FMT);

const DNS1123_LABEL_MSG = 'a lowercase RFC 1123 label must consist of lower case alphanumeric '
  + "characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MSG = 'a lowercase RFC 1123 subdomain must consist of lower case '
  + "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_MSG = 'a DNS-1035 label must consist of lower case alphanumeric characters '
  + "or '-', start with an alphabetic character, and end with an alphanumeric character";
const QNAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and "
  + 'end with an alphanumeric character';
const LABEL_VALUE_MSG = 'a valid label must be an empty string or consist of alphanumeric '
  + "characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** Upstream RegexError: `msg (e.g. 'a',  or 'b', regex used for validation is 'fmt')`. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  const ex = examples.map((e, i) => `${i > 0 ? ' or ' : ''}'${e}', `).join('');
  return `${msg} (e.g. ${ex}regex used for validation is '${fmt}')`;
}

export function maxLenError(n: number): string {
  return `must be no more than ${n} characters`;
}

export const EMPTY_ERROR = 'must be non-empty';

export function isDNS1123Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (!DNS1123_LABEL_RE.test(v)) {
    errs.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

export function isDNS1123Subdomain(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN_RE.test(v)) {
    errs.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  }
  return errs;
}

export function isDNS1035Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (!DNS1035_LABEL_RE.test(v)) {
    errs.push(regexError(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  }
  return errs;
}

/** Label keys, annotation keys, finalizers: `[prefix/]name`. */
export function isQualifiedName(v: string): string[] {
  // The common case, without splitting: a plain name (QNAME has no '/') that is valid.
  if (v.length <= 63 && QNAME_RE.test(v)) return [];
  const errs: string[] = [];
  const parts = v.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push(`prefix part ${EMPTY_ERROR}`);
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [`a qualified name ${regexError(QNAME_MSG, QNAME_FMT, 'MyName', 'my.name', '123-abc')}`
      + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"];
  }
  if (name.length === 0) errs.push(`name part ${EMPTY_ERROR}`);
  else if (name.length > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!QNAME_RE.test(name)) {
    errs.push(`name part ${regexError(QNAME_MSG, QNAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  }
  return errs;
}

export function isValidLabelValue(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (!LABEL_VALUE_RE.test(v)) {
    errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  }
  return errs;
}

/** IANA service names (named ports): ≤15 chars, lower-case alphanumerics and '-', ≥1 letter. */
export function isValidPortName(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(v)) {
    errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  }
  if (!/[a-z]/.test(v)) errs.push('must contain at least one letter (a-z)');
  if (v.includes('--')) errs.push("must not contain consecutive hyphens");
  if (v.startsWith('-') || v.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

export function isValidPortNum(n: unknown): string[] {
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 65535
    ? [] : ['must be between 1 and 65535, inclusive'];
}

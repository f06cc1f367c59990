// URL redaction, the first of lib/redact.ts's two tools (see there): a connection string, or
// every URL in free text, with its password and secret query values replaced by `***`.
// lib/redact.ts re-exports it. No framework imports, as there.

export const REDACTED = '***';

export const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/** A query parameter or config field whose value is a secret. */
export function isSecretName(name: string): boolean {
  const plain = safeDecode(name).toLowerCase().replace(/[^a-z0-9]/g, '');
  return /pass|pwd|secret|token|credential|^auth|key$/.test(plain);
}

// One host of an authority: an IP literal in brackets, or a name or IPv4 address (Unicode
// names too), with an optional port. Several, comma-separated, for multi-host strings.
const HOST = String.raw`(?:\[[0-9A-Za-z:.%_~-]*\]|[\p{L}\p{N}._~%-]+)(?::\d*)?`;
const HOSTS = String.raw`${HOST}(?:,${HOST})*`;
/** What must follow the userinfo's `@` in one connection string: hosts, then the end or a path/query. */
const HOSTS_THEN_END = new RegExp(String.raw`^(?:${HOSTS}(?=[/?#]|$)|(?=/))`, 'u');
/** The same inside free text, where the URL may be followed by words and punctuation. */
const HOSTS_THEN_BOUNDARY = new RegExp(String.raw`^(?:${HOSTS}(?=[/?#\s,;)\]'"\x60>]|$)|(?=/))`, 'u');
/** An authority as RFC 3986 writes it (userinfo characters, hosts), possibly empty. */
const STRICT_AUTHORITY = new RegExp(String.raw`^(?:[\w\-.~%!$&'()*+,;=:@]*@)?(?:${HOSTS})?$`, 'u');

/**
 * The index in `s` (a URL after its `scheme://`, or a scheme-less `user:pass@host...`) of the
 * `@` that ends the userinfo, or -1 when there is none.
 *
 * The userinfo runs to the LAST `@` that is followed by a host (and then the end, a path or a
 * query), so a password holding `@`, `/`, `?`, `#`, `:`, spaces or tabs is covered whole. The
 * one exception is an `@` inside a query parameter's value when the URL reads correctly without
 * it (`redis://h:6379?password=a@b`, `...@h/db?application_name=me@x`): the standard reading
 * is kept then, and a secret-named parameter is redacted as such.
 */
export function userinfoEnd(s: string, free = false, strictReading = true): number {
  const hostsAfter = free ? HOSTS_THEN_BOUNDARY : HOSTS_THEN_END;
  const candidates: number[] = [];
  for (let at = s.indexOf('@'); at !== -1; at = s.indexOf('@', at + 1)) {
    const colon = s.indexOf(':');
    const user = s.slice(0, colon === -1 || colon > at ? at : colon);
    // A user name never holds a path, query or fragment delimiter; in free text, no blank either.
    if ((free ? /[/?#\s]/ : /[/?#]/).test(user)) continue;
    if (hostsAfter.test(s.slice(at + 1))) candidates.push(at);
  }
  const last = candidates.at(-1);
  if (last === undefined) return -1;
  if (!strictReading) return last;
  // The standard reading: the authority ends at the first / ? # (or blank, in free text).
  const found = s.search(free ? /[/?#\s]/ : /[/?#]/);
  const authorityEnd = found === -1 ? s.length : found;
  if (last < authorityEnd) return last;
  const authority = s.slice(0, authorityEnd);
  if (!STRICT_AUTHORITY.test(authority)) return last; // it does not read as one: the password holds / ? or #
  const query = s.indexOf('?', authorityEnd);
  if (query === -1 || last < query) return last; // an `@` in the path: a password with a `/`
  const pairStart = Math.max(s.lastIndexOf('&', last), s.lastIndexOf(';', last), query) + 1;
  const pair = s.slice(pairStart, last);
  const equals = pair.indexOf('=');
  if (equals === -1) return last;
  const ownAt = authority.lastIndexOf('@');
  return isSecretName(pair.slice(0, equals)) || ownAt !== -1 ? ownAt : last;
}

/**
 * One connection string or URL with its password and secret query values replaced by `***`:
 * `postgres://app:p@ss/w rd@db:5432/app` -> `postgres://app:***@db:5432/app`,
 * `user:secret@host:5432/db` -> `user:***@host:5432/db`,
 * `redis://h:6379/0?password=x` -> `redis://h:6379/0?password=***`.
 * Text that is not a URL comes back as it is.
 */
export function redactUrl(text: string): string {
  const scheme = SCHEME.exec(text)?.[0] ?? '';
  return scheme + redactAfterScheme(text.slice(scheme.length), false);
}

function redactAfterScheme(s: string, free: boolean): string {
  const at = userinfoEnd(s, free);
  let head = '';
  let rest = s;
  if (at !== -1) {
    const colon = s.indexOf(':');
    head = colon !== -1 && colon < at ? `${s.slice(0, colon)}:${REDACTED}@` : s.slice(0, at + 1);
    rest = s.slice(at + 1);
  }
  const query = free ? rest.search(/[?\s]/) : rest.indexOf('?');
  if (query === -1 || rest[query] !== '?') return head + rest;
  return head + rest.slice(0, query + 1) + redactQuery(rest.slice(query + 1), free);
}

/** The values of secret-named parameters of a query string (without its `?`) replaced. */
function redactQuery(query: string, free: boolean): string {
  let out = '';
  for (const part of queryParts(query, free)) {
    out += part.kind === 'secret' ? REDACTED : part.text;
  }
  return out;
}

export type QueryPart = { kind: 'text' | 'value' | 'secret'; text: string; name?: string };

/**
 * A query string cut into names, delimiters and values. A secret value runs to the next
 * `&name=` (not merely the next `&`), so an unencoded `&` in a password stays inside it.
 */
export function queryParts(query: string, free: boolean): QueryPart[] {
  const parts: QueryPart[] = [];
  const stop = free ? /[&;#\s]/ : /[&;#]/;
  let position = 0;
  while (position < query.length) {
    const nameEnd = searchFrom(query, free ? /[=&;#\s]/ : /[=&;#]/, position);
    const name = query.slice(position, nameEnd);
    if (query[nameEnd] === '=') {
      const secret = isSecretName(name);
      const valueEnd = secret ? searchFrom(query, free ? /[&;](?=[\w.[\]%-]+=)|#|\s/ : /[&;](?=[\w.[\]%-]+=)|#/, nameEnd + 1) : searchFrom(query, stop, nameEnd + 1);
      parts.push({ kind: 'text', text: `${name}=` });
      parts.push({ kind: secret ? 'secret' : 'value', text: query.slice(nameEnd + 1, valueEnd), name });
      position = valueEnd;
    } else {
      parts.push({ kind: 'text', text: name });
      position = nameEnd;
    }
    const delimiter = query[position];
    if (delimiter === '&' || delimiter === ';') {
      parts.push({ kind: 'text', text: delimiter });
      position += 1;
    } else if (delimiter !== undefined) {
      parts.push({ kind: 'text', text: query.slice(position) }); // a fragment, or (in free text) the words after the URL
      break;
    }
  }
  return parts;
}

function searchFrom(text: string, pattern: RegExp, from: number): number {
  const found = text.slice(from).search(pattern);
  return found === -1 ? text.length : from + found;
}

// Where a URL starts in free text: `scheme://`, or a gRPC target (`dns:user:pass@host:2379`).
const URL_START = /\b[A-Za-z][A-Za-z0-9+.-]*:\/\/|\b(?:dns|ipv4|ipv6|unix|unix-abstract|vsock):(?!\/\/)/g;
// `password=...` as libpq-style key=value text writes it (quoted or up to the next blank).
const KEY_VALUE = /(^|[\s,;(])([\w.-]+)(\s*=\s*)('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s,;)]+)/g;

/**
 * Free text (an error message, a log line) with every URL in it redacted as redactUrl does,
 * and `password=...` style pairs too. A URL ends at the end of its line or where the next one
 * starts; when in doubt, more is hidden rather than less.
 */
export function redactUrlsIn(text: string): string {
  const starts = [...text.matchAll(URL_START)];
  let out = '';
  let copied = 0;
  starts.forEach((match, index) => {
    const start = match.index + match[0].length;
    if (start < copied) return;
    const next = starts[index + 1]?.index ?? text.length;
    const newline = text.indexOf('\n', start);
    const end = Math.min(next, newline === -1 ? text.length : newline);
    out += text.slice(copied, start) + redactAfterScheme(text.slice(start, end), true);
    copied = end;
  });
  out += text.slice(copied);
  return out.replace(KEY_VALUE, (whole, before: string, name: string, equals: string) =>
    isSecretName(name) ? `${before}${name}${equals}${REDACTED}` : whole,
  );
}

export function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * A URL, or text holding URLs, with every password replaced by `***` (lib/redact.ts parses
 * them: passwords with `@`, `/`, blanks; scheme-less `user:pass@host`; secret query parameters).
 */
export function redactUrlPassword(text: string): string {
  // One connection string (with or without a scheme) is read whole; anything else as free text.
  const single = !/[\r\n]/.test(text) && (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text) || /^[^\s:/?#@]+:.*@/.test(text));
  return single ? redactUrl(text) : redactUrlsIn(text);
}

// Secrets out of everything a person or a log can see, by parsing rather than by one regex.
//
// Two tools, used together:
// - redactUrl / redactUrlsIn take a connection string (any scheme, or none: `user:pass@host`)
//   apart and put `***` for its password and for the values of query parameters named like
//   secrets (password, sslpassword, token, secret, sslkey...). The user, host, port and path
//   stay, so a person can still tell targets apart.
// - secretsOf collects every secret a config holds (URL passwords read every way a driver
//   might read them, raw, percent-decoded and percent-encoded; `password` fields of any type;
//   query-parameter secrets; etcd's username and password), and scrub replaces each literal
//   occurrence of them in any text: driver and gRPC errors that quote a credential without
//   being a URL are then safe too.
//
// No framework imports: this runs in the CLI, the server and the collector alike.
import { isSecretName, queryParts, REDACTED, safeDecode, SCHEME, userinfoEnd } from './redact-url';

// The first tool, URL redaction, is in redact-url.ts; exported from here as before.
export { isSecretName, REDACTED, redactUrl, redactUrlPassword, redactUrlsIn, userinfoEnd } from './redact-url';

/** Every secret a connection string holds, read every way a driver or a parser might read it. */
export function urlSecrets(text: string): string[] {
  const found = new Set<string>();
  const scheme = SCHEME.exec(text)?.[0] ?? '';
  const s = text.slice(scheme.length);
  // Our reading, and the loosest one (the last `@` before a host, whatever the query says).
  for (const at of new Set([userinfoEnd(s), userinfoEnd(s, false, false)])) {
    if (at === -1) continue;
    const colon = s.indexOf(':');
    if (colon !== -1 && colon < at) found.add(s.slice(colon + 1, at));
    const query = s.indexOf('?', at + 1);
    if (query !== -1) addQuerySecrets(s.slice(query + 1), found);
  }
  const query = s.indexOf('?');
  if (query !== -1) addQuerySecrets(s.slice(query + 1), found);
  // The WHATWG reading, which is the one pg and ioredis use.
  for (const candidate of scheme ? [text] : [`x://${text}`]) {
    try {
      const url = new URL(candidate);
      if (url.password) found.add(url.password);
      url.searchParams.forEach((value, name) => {
        if (isSecretName(name) && value) found.add(value);
      });
    } catch {
      // not a URL to WHATWG: the readings above stand
    }
  }
  return [...found].flatMap(secretForms);
}

function addQuerySecrets(query: string, found: Set<string>) {
  for (const part of queryParts(query, false)) if (part.kind === 'secret' && part.text) found.add(part.text);
}

/**
 * The forms one secret may take in text: as written, percent-decoded (also with `+` for a
 * blank), percent-encoded (as encodeURIComponent and as WHATWG's userinfo encode it, either
 * hex case), without tabs and newlines (WHATWG drops them), and JSON-escaped.
 */
export function secretForms(secret: string): string[] {
  const forms = new Set<string>();
  const add = (form: string) => {
    if (form === '' || forms.has(form)) return;
    forms.add(form);
    const escaped = JSON.stringify(form).slice(1, -1);
    if (escaped !== form) forms.add(escaped);
  };
  for (const base of [secret, secret.replace(/[\t\n\r]/g, '')]) {
    for (const plain of [base, safeDecode(base), safeDecode(base.replace(/\+/g, ' '))]) {
      add(plain);
      for (const encoded of [encodeURIComponent(plain), whatwgUserinfo(plain)]) {
        add(encoded);
        add(encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()));
      }
    }
  }
  return [...forms];
}

function whatwgUserinfo(password: string): string {
  try {
    const url = new URL('http://h');
    url.password = password;
    return url.password;
  } catch {
    return password;
  }
}

/**
 * Every secret a config holds, in every form it may be printed in: URL passwords and secret
 * query values of any string that reads as a connection string, fields named like
 * password/secret/token (of any type: a number is a secret too), and a source's username
 * (etcd's, or any backend's that signs in by name: whatever its kind, a source entry's
 * `username` is a credential). Works on a loaded Config, one source, or the unchecked JSON of a config file.
 */
export function secretsOf(value: unknown): string[] {
  const found = new Set<string>();
  collect(value, undefined, undefined, found, 0);
  return [...found];
}

function collect(value: unknown, key: string | undefined, parent: unknown, found: Set<string>, depth: number) {
  if (depth > 32) return;
  // The config's `auth` section is named like a secret but holds settings: its own fields decide (oidc.clientSecret).
  const section = key === 'auth' && value !== null && typeof value === 'object' && !Array.isArray(value);
  const secretField =
    key !== undefined &&
    !section &&
    (isSecretName(key) || (key === 'username' && typeof (parent as { backend?: unknown } | null)?.backend === 'string'));
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') {
    const text = String(value);
    if (secretField) for (const form of secretForms(text)) found.add(form);
    // Connection strings: any `scheme://...`, and whatever is in a URL field (a scheme-less one too).
    const urlField = key !== undefined && /^(?:url|urls|endpoints|hosts|DATABASE_URL)$/.test(key);
    if (typeof value === 'string' && (urlField || SCHEME.test(value))) for (const form of urlSecrets(value)) found.add(form);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) collect(item, key, parent, found, depth + 1);
    return;
  }
  if (value !== null && typeof value === 'object') {
    for (const [name, item] of Object.entries(value)) {
      // A source's canary names the lease key it holds (shown on the sources page), not a secret: its other fields decide.
      const canary = name === 'canary' && !secretField && typeof (value as { backend?: unknown }).backend === 'string' && item !== null && typeof item === 'object' && !Array.isArray(item);
      // Everything under a secret-named field is secret.
      collect(canary ? { ...item, key: undefined } : item, secretField ? key : name, value, found, depth + 1);
    }
  }
}

const scrubbers = new WeakMap<readonly string[], RegExp | null>();

/**
 * `text` with every occurrence of every secret replaced by `***`, longest first (so a secret
 * that holds a shorter one goes whole). Every non-empty secret is scrubbed, however short:
 * a one-character password costs readability, never the password.
 */
export function scrub(text: string, secrets: readonly string[]): string {
  let pattern = scrubbers.get(secrets);
  if (pattern === undefined) {
    const unique = [...new Set(secrets)].filter((secret) => secret.length > 0).sort((a, b) => b.length - a.length);
    pattern = unique.length === 0 ? null : new RegExp(unique.map(escapeRegExp).join('|'), 'g');
    scrubbers.set(secrets, pattern);
  }
  return pattern === null ? text : text.replace(pattern, REDACTED);
}

/** Every string inside `value` scrubbed (for status details and other JSON shown to people). */
export function scrubDeep<T>(value: T, secrets: readonly string[], depth = 0): T {
  if (secrets.length === 0 || depth > 32) return value;
  if (typeof value === 'string') return scrub(value, secrets) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => scrubDeep(item, secrets, depth + 1)) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [scrub(key, secrets), scrubDeep(item, secrets, depth + 1)])) as T;
  }
  return value;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const secretState = globalThis as typeof globalThis & {
  __leaseholdSecrets?: { all: Set<string>; list: readonly string[]; databaseUrl?: string };
};

/** Adds secrets to knownSecrets(): lib/config calls it with every config it loads. */
export function rememberSecrets(secrets: Iterable<string>) {
  const state = (secretState.__leaseholdSecrets ??= { all: new Set(), list: [] });
  const before = state.all.size;
  for (const secret of secrets) state.all.add(secret);
  if (state.all.size !== before) state.list = [...state.all];
}

/**
 * Every secret of every config this process has loaded, and of its DATABASE_URL, in every
 * form (lib/redact.ts secretsOf): for scrubbing a log line or an error that may quote one.
 * The same array until a new secret is learnt, so scrub() reuses its pattern.
 */
export function knownSecrets(): readonly string[] {
  const state = (secretState.__leaseholdSecrets ??= { all: new Set(), list: [] });
  const databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl && databaseUrl !== state.databaseUrl) {
    state.databaseUrl = databaseUrl;
    rememberSecrets(secretsOf({ env: { DATABASE_URL: databaseUrl } }));
  }
  return state.list;
}

// Configuration: `leasehold.config.json` (path from LEASEHOLD_CONFIG) plus the environment.
//
// Everything a person can get wrong here is reported at once, one line per problem,
// each naming the field, what was expected and what was found. Secrets are never shown:
// URLs are redacted by parsing (lib/redact.ts), fields named like password/secret/token are
// described without their value, and every problem is scrubbed of every secret the file and
// DATABASE_URL hold. A JSON syntax error is placed by line and column, never quoted.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { DEMO_SOURCE_ENTRY } from './demo/source';
import { parseAllowedHosts } from './net/host-pattern';
import { redactUrl, redactUrlsIn, scrub, secretsOf } from './redact';

export const DEFAULT_CONFIG_FILE = 'leasehold.config.json';
export const DEFAULT_DATA_DIR = '.leasehold/data';
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 3000;

/** Thrown with every problem found in the config file or the environment. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(readonly origin: string, problems: string[]) {
    super(`${origin} has ${problems.length === 1 ? 'a problem' : `${problems.length} problems`}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

// Messages that begin with "expected" are used as they are by formatIssue below.
const sourceName = z
  .string({ error: 'expected a source name (text)' })
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, {
    error: 'expected a source name of 1-63 letters, digits, ".", "_" or "-", starting with a letter or digit',
  });

function urlWithScheme(schemes: string[], what: string, orElse: (value: string) => boolean = () => false) {
  return z.string({ error: `expected ${what}` }).refine(
    (value) => {
      if (orElse(value)) return true;
      try {
        const url = new URL(value);
        return schemes.includes(url.protocol.replace(/:$/, '')) && url.host !== '';
      } catch {
        return false;
      }
    },
    { error: `expected ${what}` },
  );
}

const postgresUrl = urlWithScheme(['postgres', 'postgresql'], 'a postgres:// or postgresql:// URL');

/**
 * A PostgreSQL source's url may name the embedded store's own database instead of a server:
 * `pglite://embedded`, optionally with a path that only labels it (`pglite://embedded/demo`).
 * It is read through the store's open PGlite (lib/sources/registry.ts), so only by a collector
 * on the embedded store (no DATABASE_URL). The embedded demo's source is one (lib/demo/source.ts).
 */
export function namesEmbeddedStore(url: string): boolean {
  return /^pglite:\/\/embedded(\/[A-Za-z0-9._-]*)?$/.test(url);
}
const postgresSourceUrl = urlWithScheme(['postgres', 'postgresql'], 'a postgres:// or postgresql:// URL', namesEmbeddedStore);
const redisUrl = urlWithScheme(['redis', 'rediss'], 'a redis:// or rediss:// URL');
const etcdEndpoint = urlWithScheme(['http', 'https'], 'an http:// or https:// etcd endpoint');

// A table name as Postgres would accept it unquoted, optionally schema-qualified.
const tableName = z
  .string({ error: 'expected a table name' })
  .regex(/^([A-Za-z_][A-Za-z0-9_$]{0,62}\.)?[A-Za-z_][A-Za-z0-9_$]{0,62}$/, {
    error: 'expected a table name such as "leases" or "app.leases"',
  });

const pollMs = z
  .number({ error: 'expected a number of milliseconds' })
  .int({ error: 'expected a whole number of milliseconds' })
  .min(100, { error: 'expected at least 100 ms' })
  .max(600_000, { error: 'expected at most 600000 ms (10 minutes)' });

const postgresSource = z.strictObject({
  name: sourceName,
  backend: z.literal('postgres'),
  url: postgresSourceUrl,
  tables: z
    .array(
      z.strictObject({
        table: tableName,
        format: z.enum(['leasehold', 'shedlock']),
      }),
    )
    .default([]),
  advisoryLocks: z.boolean().default(false),
  pollMs: pollMs.optional(),
});

const redisSource = z.strictObject({
  name: sourceName,
  backend: z.literal('redis'),
  urls: z.array(redisUrl).min(1, { error: 'expected at least one redis:// URL' }),
  /** `single`: one instance (urls must have one entry); `redlock`: a quorum over independent instances. */
  mode: z.enum(['single', 'redlock']).optional(),
  match: z.array(z.string().min(1, { error: 'expected a non-empty key pattern' })).min(1).default(['*']),
  fenceSuffix: z.string().min(1).default(':fence'),
  /** `auto` uses keyspace notifications when the server has them on; `enable` turns them on (changes the server's config). */
  keyspaceNotifications: z.enum(['auto', 'off', 'enable']).default('auto'),
  pollMs: pollMs.optional(),
});

const etcdSource = z.strictObject({
  name: sourceName,
  backend: z.literal('etcd'),
  endpoints: z.array(etcdEndpoint).min(1, { error: 'expected at least one etcd endpoint' }),
  prefixes: z.array(z.string().min(1, { error: 'expected a non-empty key prefix' })).min(1),
  username: z.string().optional(),
  password: z.string().optional(),
  pollMs: pollMs.optional(),
});

const sourceSchema = z.discriminatedUnion('backend', [postgresSource, redisSource, etcdSource]);

const fileSchema = z
  .strictObject({
    $schema: z.string().optional(),
    sources: z.array(sourceSchema).default([]),
    pollMs: pollMs.default(1000),
    retention: z
      .strictObject({
        rollupDays: z.number().int().min(1).default(30),
        eventDays: z.number().int().min(1).default(90),
        renewalSamplesPerLease: z.number().int().min(10).max(10_000).default(120),
      })
      .prefault({}),
    metrics: z
      .strictObject({
        // Per-lease series on /metrics for at most this many leases (0: none); see README, Metrics.
        leaseSeriesLimit: z.number().int().min(0).max(100_000).default(1_000),
      })
      .prefault({}),
  })
  .superRefine((config, ctx) => {
    const seen = new Map<string, number>();
    config.sources.forEach((source, index) => {
      const first = seen.get(source.name);
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['sources', index, 'name'],
          message: `expected a name no other source uses, found "${source.name}", already the name of sources[${first}]`,
        });
      } else {
        seen.set(source.name, index);
      }
      if (source.backend === 'redis' && source.mode === 'single' && source.urls.length > 1) {
        ctx.addIssue({
          code: 'custom',
          path: ['sources', index, 'mode'],
          message: `expected "redlock" for ${source.urls.length} urls ("single" takes exactly one), found "single"`,
        });
      }
    });
  });

export type SourceConfig = z.output<typeof sourceSchema>;
export type PostgresSourceConfig = z.output<typeof postgresSource>;
export type RedisSourceConfig = z.output<typeof redisSource>;
export type EtcdSourceConfig = z.output<typeof etcdSource>;
export type FileConfig = z.output<typeof fileSchema>;

export type StoreConfig =
  | { kind: 'postgres'; url: string }
  | { kind: 'pglite'; dataDir: string };

export type Config = FileConfig & {
  /** Where the file came from, or null when none exists and defaults apply. */
  file: string | null;
  /**
   * The embedded demo (lib/demo): on the embedded store with no sources configured, unless
   * LEASEHOLD_DEMO=off. Its one source, `demo` (lib/demo/source.ts), is then the config's only
   * source, validated by the same schema as a file's.
   */
  demo: boolean;
  store: StoreConfig;
  host: string;
  port: number;
  /** The collector's ownership lease on each source (LEASEHOLD_COLLECTOR_LEASE_TTL_MS): how soon a dead collector's sources move. */
  collectorLeaseTtlMs: number;
  /** LEASEHOLD_ALLOWED_HOSTS: the Host names requests may carry (lib/api/host.ts), `*` for any; null for the default. */
  allowedHosts: string[] | null;
  /** LEASEHOLD_STREAM_MAX_CLIENTS and _PER_ADDRESS: live streams open at once in this process, and from one address. */
  stream: { maxClients: number; maxClientsPerAddress: number };
};

export const DEFAULT_STREAM_MAX_CLIENTS = 500;
export const DEFAULT_STREAM_MAX_CLIENTS_PER_ADDRESS = 50;

export const DEFAULT_COLLECTOR_LEASE_TTL_MS = 10_000;

const envSchema = z.object({
  DATABASE_URL: z.preprocess(blankToUndefined, postgresUrl.optional()),
  PORT: z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: 'expected a port number' })
      .int({ error: 'expected a whole port number' })
      .min(1, { error: 'expected a port from 1 to 65535' })
      .max(65535, { error: 'expected a port from 1 to 65535' })
      .default(DEFAULT_PORT),
  ),
  HOST: z.preprocess(
    blankToUndefined,
    z
      .string()
      .regex(/^[A-Za-z0-9.:[\]-]+$/, { error: 'expected a host name or IP address to listen on' })
      .default(DEFAULT_HOST),
  ),
  LEASEHOLD_DATA_DIR: z.preprocess(blankToUndefined, z.string().default(DEFAULT_DATA_DIR)),
  LEASEHOLD_COLLECTOR_LEASE_TTL_MS: z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: 'expected a time in milliseconds' })
      .int({ error: 'expected a whole number of milliseconds' })
      .min(2_000, { error: 'expected at least 2000 ms (a shorter ownership lease moves sources on every hiccup)' })
      .max(600_000, { error: 'expected at most 600000 ms (10 minutes)' })
      .default(DEFAULT_COLLECTOR_LEASE_TTL_MS),
  ),
  LEASEHOLD_STREAM_MAX_CLIENTS: streamCount(DEFAULT_STREAM_MAX_CLIENTS),
  LEASEHOLD_STREAM_MAX_CLIENTS_PER_ADDRESS: streamCount(DEFAULT_STREAM_MAX_CLIENTS_PER_ADDRESS),
  LEASEHOLD_ALLOWED_HOSTS: z.preprocess(
    blankToUndefined,
    z
      .string()
      .refine((text) => parseAllowedHosts(text) !== null, {
        error: 'expected a comma-separated list of host names or addresses, each optionally with :port ([::1]:3000 for IPv6), or *',
      })
      .transform((text) => parseAllowedHosts(text)!)
      .optional(),
  ),
});

/** A cap on live streams (lib/live/stream.ts): a whole number from 1 to 1,000,000. */
function streamCount(fallback: number) {
  return z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: 'expected a whole number of streams from 1 to 1000000' })
      .int({ error: 'expected a whole number of streams from 1 to 1000000' })
      .min(1, { error: 'expected a whole number of streams from 1 to 1000000' })
      .max(1_000_000, { error: 'expected a whole number of streams from 1 to 1000000' })
      .default(fallback),
  );
}

function blankToUndefined(value: unknown) {
  return typeof value === 'string' && value.trim() === '' ? undefined : value;
}

export type LoadConfigOptions = {
  env?: Record<string, string | undefined>;
  cwd?: string;
};

/**
 * Reads and validates the config file and the environment.
 * Fails with ConfigError listing every problem; never with anything else.
 */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const problems: string[] = [];

  const envResult = envSchema.safeParse(env, { reportInput: true });
  if (!envResult.success) {
    for (const issue of envResult.error.issues) problems.push(formatIssue(issue, env, 'environment variable '));
  }

  const explicit = blankToUndefined(env.LEASEHOLD_CONFIG) as string | undefined;
  const file = path.resolve(cwd, explicit ?? DEFAULT_CONFIG_FILE);
  let fileConfig: FileConfig | undefined;
  let fileValue: unknown;
  let origin = explicit ? file : 'the environment';
  // Paths chosen at run time: tell Turbopack not to trace the whole project for them.
  const fileExists = existsSync(/*turbopackIgnore: true*/ file);
  if (fileExists) {
    const relative = path.relative(cwd, file);
    origin = relative && !relative.startsWith('..') ? relative : file;
    const parsed = parseConfigText(readConfigFile(file, problems), problems);
    if (parsed !== undefined) {
      const interpolated = interpolateEnv(parsed, env, problems);
      fileValue = interpolated;
      const result = fileSchema.safeParse(interpolated, { reportInput: true });
      if (result.success) fileConfig = result.data;
      else for (const issue of result.error.issues) problems.push(formatIssue(issue, interpolated));
    }
  } else if (explicit) {
    problems.push(`LEASEHOLD_CONFIG: expected the path of a config file, found "${explicit}", which does not exist`);
  } else {
    fileConfig = fileSchema.parse({});
  }

  // The embedded demo (lib/demo) registers its one source as a file would: its entry
  // (lib/demo/source.ts) goes through the file's schema, in place of the file's no sources.
  const databaseUrl = envResult.success ? envResult.data.DATABASE_URL : undefined;
  const demo = envResult.success && !databaseUrl && fileConfig?.sources.length === 0 && env.LEASEHOLD_DEMO !== 'off';
  if (demo) {
    const withDemo = { ...(fileValue as Record<string, unknown> | undefined), sources: [DEMO_SOURCE_ENTRY] };
    const result = fileSchema.safeParse(withDemo, { reportInput: true });
    if (result.success) fileConfig = result.data;
    else for (const issue of result.error.issues) problems.push(formatIssue(issue, withDemo));
  }
  // A source may name the embedded store's database only where the store is embedded.
  if (databaseUrl) {
    fileConfig?.sources.forEach((source, index) => {
      if (source.backend === 'postgres' && namesEmbeddedStore(source.url)) {
        problems.push(`${formatPath(['sources', index, 'url'], fileValue)}: expected a postgres:// or postgresql:// URL (pglite://embedded is the embedded store's database, and DATABASE_URL puts the store on PostgreSQL), found "${source.url}"`);
      }
    });
  }

  if (problems.length > 0 || !envResult.success || fileConfig === undefined) {
    // A secret may sit where a problem quotes text (a value in the wrong field): scrub them all.
    const secrets = secretsOf({ file: fileValue, env: { DATABASE_URL: env.DATABASE_URL } });
    rememberSecrets(secrets);
    throw new ConfigError(origin, problems.map((problem) => scrub(problem, secrets)));
  }
  const { DATABASE_URL, PORT, HOST, LEASEHOLD_DATA_DIR, LEASEHOLD_COLLECTOR_LEASE_TTL_MS, LEASEHOLD_ALLOWED_HOSTS, LEASEHOLD_STREAM_MAX_CLIENTS, LEASEHOLD_STREAM_MAX_CLIENTS_PER_ADDRESS } =
    envResult.data;
  const config: Config = {
    ...fileConfig,
    demo,
    file: fileExists ? file : null,
    store: DATABASE_URL
      ? { kind: 'postgres', url: DATABASE_URL }
      : { kind: 'pglite', dataDir: path.resolve(cwd, LEASEHOLD_DATA_DIR) },
    host: HOST,
    port: PORT,
    collectorLeaseTtlMs: LEASEHOLD_COLLECTOR_LEASE_TTL_MS,
    allowedHosts: LEASEHOLD_ALLOWED_HOSTS ?? null,
    stream: { maxClients: LEASEHOLD_STREAM_MAX_CLIENTS, maxClientsPerAddress: LEASEHOLD_STREAM_MAX_CLIENTS_PER_ADDRESS },
  };
  rememberSecrets(secretsOf(config));
  return config;
}

const secretState = globalThis as typeof globalThis & {
  __leaseholdSecrets?: { all: Set<string>; list: readonly string[]; databaseUrl?: string };
};

function rememberSecrets(secrets: Iterable<string>) {
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

function readConfigFile(file: string, problems: string[]): string | undefined {
  try {
    return readFileSync(/*turbopackIgnore: true*/ file, 'utf8');
  } catch (error) {
    problems.push(`${file}: expected a readable file, found ${(error as NodeJS.ErrnoException).code ?? 'an unreadable file'}`);
    return undefined;
  }
}

function parseConfigText(text: string | undefined, problems: string[]): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    // V8's messages quote the text around the error ("nter2@h", ], ...), which may hold a
    // password: only the place is given, and the kind of error when V8 names it in fixed words.
    const message = (error as Error).message;
    const position = /at position (\d+)/.exec(message);
    const offset = position ? Number(position[1]) : syntaxErrorOffset(text);
    const kind = message.replace(/ in JSON at position \d+.*$/s, '');
    const reason = JSON_ERROR_KINDS.test(kind) ? kind.charAt(0).toLowerCase() + kind.slice(1) : 'an unexpected character';
    problems.push(`${lineAndColumn(text, offset)}: expected valid JSON, found a syntax error (${reason})`);
    return undefined;
  }
}

/** V8's JSON.parse messages that quote nothing of the text (the quotes in them are JSON's own punctuation). */
const JSON_ERROR_KINDS =
  /^(?:Unterminated string|Bad control character in string literal|Bad escaped character|Bad Unicode escape|Unexpected end of JSON input|Unexpected non-whitespace character after JSON|Expected (?:property name or '\}'|',' or '\}' after property value|',' or '\]' after array element|double-quoted property name|':' after property name)|Exponent part is missing a number|Unterminated fractional number|No number after minus sign)$/;

/**
 * Where JSON.parse gave up, for messages that do not say (`Unexpected token 'h', "..." is not
 * valid JSON`): the longest prefix of the text that could still begin valid JSON.
 */
function syntaxErrorOffset(text: string): number {
  const viable = (length: number) => {
    try {
      JSON.parse(text.slice(0, length));
      return true;
    } catch (error) {
      const message = (error as Error).message;
      const at = /at position (\d+)/.exec(message);
      return message.startsWith('Unexpected end of JSON input') || (at !== null && Number(at[1]) >= length);
    }
  };
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (viable(middle)) low = middle;
    else high = middle - 1;
  }
  return low;
}

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

/**
 * Replaces `${NAME}` in every string of the file by the environment variable NAME,
 * so secrets can stay out of the file. `$${` stands for a literal `${`.
 */
function interpolateEnv(
  value: unknown,
  env: Record<string, string | undefined>,
  problems: string[],
  at: PathKey[] = [],
  root: unknown = value,
): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$?\$\{([^}]*)\}/g, (match, name: string) => {
      if (match.startsWith('$$')) return match.slice(1);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        problems.push(`${formatPath(at, root)}: expected \${NAME} with NAME an environment variable name, found "\${${name}}"`);
        return match;
      }
      const replacement = env[name];
      if (replacement === undefined) {
        problems.push(`${formatPath(at, root)}: refers to the environment variable ${name}, which is not set`);
        return match;
      }
      return replacement;
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => interpolateEnv(item, env, problems, [...at, index], root));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolateEnv(item, env, problems, [...at, key], root)]),
    );
  }
  return value;
}

type PathKey = string | number;
type Issue = z.core.$ZodIssue;

/** One sentence for one problem: "<field>: expected <what>, found <what was there>". */
export function formatIssue(issue: Issue, root: unknown, fieldPrefix = ''): string {
  const at = issue.path as PathKey[];
  const field = fieldPrefix + formatPath(at, root);
  const found = valueAt(root, at);
  const foundText = describeValue(found, at);

  if (issue.message.startsWith('expected ')) {
    return issue.message.includes(', found ') ? `${field}: ${issue.message}` : `${field}: ${issue.message}, found ${foundText}`;
  }
  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = knownKeys(root, at);
      return issue.keys
        .map((key) => {
          const suggestion = closest(key, known);
          const where = at.length > 0 ? ` in ${formatPath(at, root)}` : '';
          return `${fieldPrefix}${formatPath([...at, key], root)}: unknown field "${key}"${where}${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`;
        })
        .join('\n  - ');
    }
    case 'invalid_type':
      return found === undefined
        ? `${field}: is required: expected ${typeName(issue.expected)}, found nothing`
        : `${field}: expected ${typeName(issue.expected)}, found ${foundText}`;
    case 'invalid_value':
      return `${field}: expected ${issue.values.length === 1 ? JSON.stringify(issue.values[0]) : `one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`}, found ${foundText}`;
    case 'invalid_union':
      if ('discriminator' in issue && issue.discriminator) {
        const options = (issue as { options?: unknown[] }).options ?? [];
        return `${field}: expected one of ${options.map((o) => JSON.stringify(o)).join(', ')}, found ${foundText}`;
      }
      return `${field}: expected one of the allowed shapes, found ${foundText}`;
    case 'too_small':
      return `${field}: expected ${boundText('at least', issue.origin, issue.minimum)}, found ${foundText}`;
    case 'too_big':
      return `${field}: expected ${boundText('at most', issue.origin, issue.maximum)}, found ${foundText}`;
    case 'invalid_format':
      return `${field}: expected a valid ${issue.format}, found ${foundText}`;
    default:
      return `${field}: ${issue.message}, found ${foundText}`;
  }
}

function boundText(relation: string, origin: string, bound: number | bigint): string {
  if (origin === 'array' || origin === 'set') return `${relation} ${bound} ${bound === 1 ? 'entry' : 'entries'}`;
  if (origin === 'string') return `${relation} ${bound} characters`;
  return `a number ${relation} ${bound}`;
}

function typeName(expected: string): string {
  const names: Record<string, string> = {
    string: 'text',
    number: 'a number',
    int: 'a whole number',
    boolean: 'true or false',
    array: 'a list',
    object: 'an object',
  };
  return names[expected] ?? expected;
}

function formatPath(at: PathKey[], root: unknown): string {
  if (at.length === 0) return '(top level)';
  let text = '';
  let node: unknown = root;
  for (const key of at) {
    text += typeof key === 'number' ? `[${key}]` : text === '' ? key : `.${key}`;
    node = node !== null && typeof node === 'object' ? (node as Record<PathKey, unknown>)[key] : undefined;
    // Name the source a person is looking at: sources[2] ("redis-eu").urls[0]
    if (typeof key === 'number' && text.startsWith('sources[') && text.indexOf(']') === text.length - 1) {
      const name = node !== null && typeof node === 'object' ? (node as { name?: unknown }).name : undefined;
      if (typeof name === 'string' && name.length > 0 && name.length <= 63) text += ` ("${name}")`;
    }
  }
  return text;
}

function valueAt(root: unknown, at: PathKey[]): unknown {
  let node = root;
  for (const key of at) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PathKey, unknown>)[key];
  }
  return node;
}

/** The fields the file's schema allows at a path (for "did you mean"), read from the schema itself. */
function knownKeys(root: unknown, at: PathKey[]): string[] {
  let schema: z.core.$ZodType | undefined = fileSchema;
  let value = root;
  for (const key of at) {
    const def: SchemaDef | undefined = schema && (concrete(schema, value)?._zod.def as SchemaDef | undefined);
    schema = def?.type === 'object' ? def.shape?.[key] : def?.type === 'array' ? def.element : undefined;
    if (!schema) return [];
    value = value !== null && typeof value === 'object' ? (value as Record<PathKey, unknown>)[key] : undefined;
  }
  const def = concrete(schema, value)?._zod.def as SchemaDef | undefined;
  return def?.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}

type SchemaDef = {
  type: string;
  shape?: Record<PathKey, z.core.$ZodType>;
  element?: z.core.$ZodType;
  innerType?: z.core.$ZodType;
  in?: z.core.$ZodType;
  options?: z.core.$ZodType[];
  discriminator?: string;
  values?: unknown[];
};

/** The schema that applies to a value: defaults and optionals unwrapped, a union's option picked by its discriminator. */
function concrete(schema: z.core.$ZodType, value: unknown): z.core.$ZodType | undefined {
  for (let depth = 0; depth < 20; depth++) {
    const def = schema._zod.def as SchemaDef;
    const inner = def.innerType ?? (def.type === 'pipe' ? def.in : undefined);
    if (inner) {
      schema = inner;
      continue;
    }
    if (def.type !== 'union') return schema;
    const tag = def.discriminator && value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[def.discriminator] : undefined;
    const option = def.options?.find((o) => ((o._zod.def as SchemaDef).shape?.[def.discriminator ?? '']?._zod.def as SchemaDef | undefined)?.values?.includes(tag));
    if (!option) return undefined;
    schema = option;
  }
  return undefined;
}

/** The known key a typo most likely meant, by edit distance. */
function closest(key: string, known: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** How a found value is shown: short, and with any password in a URL replaced. */
export function describeValue(value: unknown, at: PathKey[] = []): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  // Whatever sits in a field named like a secret is described, never shown: a number too.
  const secretField = at.some((key) => typeof key === 'string' && /password|secret|token/i.test(key));
  if (secretField) {
    if (typeof value === 'string') return `a value of ${value.length} characters (not shown)`;
    if (typeof value === 'number' || typeof value === 'bigint') return 'a number (not shown)';
    if (typeof value === 'boolean') return 'true or false (not shown)';
    if (Array.isArray(value)) return `a list (not shown)`;
    return `${typeof value === 'object' ? 'an object' : typeof value} (not shown)`;
  }
  if (typeof value === 'string') {
    const shown = redactUrlPassword(value);
    return JSON.stringify(shown.length > 80 ? `${shown.slice(0, 77)}...` : shown);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : `a list of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  return typeof value;
}

/** The embedded demo's source (lib/demo/source.ts) as loadConfig registers it: through the source schema. */
export const DEMO_SOURCE: PostgresSourceConfig = postgresSource.parse(DEMO_SOURCE_ENTRY);

/**
 * A URL, or text holding URLs, with every password replaced by `***` (lib/redact.ts parses
 * them: passwords with `@`, `/`, blanks; scheme-less `user:pass@host`; secret query parameters).
 */
export function redactUrlPassword(text: string): string {
  // One connection string (with or without a scheme) is read whole; anything else as free text.
  const single = !/[\r\n]/.test(text) && (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text) || /^[^\s:/?#@]+:.*@/.test(text));
  return single ? redactUrl(text) : redactUrlsIn(text);
}

const configState = globalThis as typeof globalThis & { __leaseholdConfig?: Config };

/** The config of this process, loaded once. Throws ConfigError (every time) while it is invalid. */
export function getConfig(): Config {
  configState.__leaseholdConfig ??= loadConfig();
  return configState.__leaseholdConfig;
}

// Configuration: `leasehold.config.json` (path from LEASEHOLD_CONFIG) plus the environment.
//
// Everything a person can get wrong here is reported at once, one line per problem,
// each naming the field, what was expected and what was found. Secrets are never shown:
// URLs are redacted by parsing (lib/redact.ts), fields named like password/secret/token are
// described without their value, and every problem is scrubbed of every secret the file and
// DATABASE_URL hold. A JSON syntax error is placed by line and column, never quoted.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { rememberSecrets, scrub, secretsOf } from '../redact';
import { interpolateEnv, parseConfigText, readConfigFile } from './file';
import { formatIssue, formatPath } from './issues';
import { backendOf, canaryProblem } from '../sources/backends';
import { blankToUndefined, DEFAULT_CONFIG_FILE, envSchema, fileSchema, type Config, type FileConfig } from './schema';

export { describeValue, formatIssue } from './issues';
export { knownSecrets, redactUrlPassword } from '../redact';
export {
  DEFAULT_COLLECTOR_LEASE_TTL_MS,
  DEFAULT_CONFIG_FILE,
  DEFAULT_DATA_DIR,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_STREAM_MAX_CLIENTS,
  DEFAULT_STREAM_MAX_CLIENTS_PER_ADDRESS,
  type Config,
  type FileConfig,
  type SourceConfig,
  type StoreConfig,
} from './schema';

/** Thrown with every problem found in the config file or the environment. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(readonly origin: string, problems: string[]) {
    super(`${origin} has ${problems.length === 1 ? 'a problem' : `${problems.length} problems`}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export type LoadConfigOptions = {
  env?: Record<string, string | undefined>;
  cwd?: string;
  /**
   * The entry of the embedded demo's one source, as a file would write it: registered in place
   * of the file's no sources when no store or source is configured and LEASEHOLD_DEMO is not
   * `off`. The demo hands it in (lib/root, from lib/demo/source.ts); without it there is no demo.
   */
  demoSource?: Record<string, unknown>;
};

/**
 * The config file (LEASEHOLD_CONFIG, or leasehold.config.json in `cwd` if there is one), read,
 * interpolated and checked against the file's schema; its problems added to `problems`. No
 * file where none was named is the file's defaults.
 */
function readFileConfig(env: Record<string, string | undefined>, cwd: string, problems: string[]) {
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
  return { file, fileExists, origin, fileValue, fileConfig };
}

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

  const { file, fileExists, origin, fileValue, ...read } = readFileConfig(env, cwd, problems);
  let fileConfig = read.fileConfig;

  // The embedded demo registers its one source as a file would: its entry (options.demoSource)
  // goes through the file's schema, in place of the file's no sources.
  const databaseUrl = envResult.success ? envResult.data.DATABASE_URL : undefined;
  const demoSource = options.demoSource;
  const demo = demoSource !== undefined && envResult.success && !databaseUrl && fileConfig?.sources.length === 0 && env.LEASEHOLD_DEMO !== 'off';
  if (demo) {
    const withDemo = { ...(fileValue as Record<string, unknown> | undefined), sources: [demoSource] };
    const result = fileSchema.safeParse(withDemo, { reportInput: true });
    if (result.success) fileConfig = result.data;
    else for (const issue of result.error.issues) problems.push(formatIssue(issue, withDemo));
  }
  // What only the whole config can see, each kind judging its own entries (e.g. a source that
  // names the embedded store's database while DATABASE_URL puts the store on PostgreSQL).
  fileConfig?.sources.forEach((source, index) => {
    const found = backendOf(source).checkInConfig?.(source, { embedded: !databaseUrl });
    if (found) problems.push(`${formatPath(['sources', index, found.field], fileValue)}: ${found.problem}`);
    const canary = canaryProblem(source);
    if (canary) problems.push(`${formatPath(['sources', index, 'canary'], fileValue)}: ${canary}`);
  });

  if (problems.length > 0 || !envResult.success || fileConfig === undefined) {
    // A secret may sit where a problem quotes text (a value in the wrong field): scrub them all.
    const secrets = secretsOf({ file: fileValue, env: { DATABASE_URL: env.DATABASE_URL } });
    rememberSecrets(secrets);
    throw new ConfigError(origin, problems.map((problem) => scrub(problem, secrets)));
  }
  const { DATABASE_URL, PORT, HOST, LEASEHOLD_DATA_DIR, LEASEHOLD_COLLECTOR_LEASE_TTL_MS, LEASEHOLD_ALLOWED_HOSTS, LEASEHOLD_STREAM_MAX_CLIENTS, LEASEHOLD_STREAM_MAX_CLIENTS_PER_ADDRESS, LEASEHOLD_ANONYMOUS_ROLE, LEASEHOLD_TRUSTED_PROXIES } =
    envResult.data;
  const auth = LEASEHOLD_ANONYMOUS_ROLE ? { ...fileConfig.auth, anonymousRole: LEASEHOLD_ANONYMOUS_ROLE } : fileConfig.auth;
  // The embedded demo delivers its alerts to its own inbox on this machine (lib/demo/inbox.ts).
  const alerts = demo && !fileConfig.alerts.allowCidrs.includes('127.0.0.1/32') ? { ...fileConfig.alerts, allowCidrs: [...fileConfig.alerts.allowCidrs, '127.0.0.1/32'] } : fileConfig.alerts;
  const config: Config = {
    ...fileConfig,
    auth,
    alerts,
    demo,
    file: fileExists ? file : null,
    store: DATABASE_URL
      ? { kind: 'postgres', url: DATABASE_URL }
      : { kind: 'pglite', dataDir: path.resolve(cwd, LEASEHOLD_DATA_DIR) },
    host: HOST,
    port: PORT,
    collectorLeaseTtlMs: LEASEHOLD_COLLECTOR_LEASE_TTL_MS,
    allowedHosts: LEASEHOLD_ALLOWED_HOSTS ?? null,
    trustedProxies: LEASEHOLD_TRUSTED_PROXIES ?? fileConfig.trustedProxies,
    stream: { maxClients: LEASEHOLD_STREAM_MAX_CLIENTS, maxClientsPerAddress: LEASEHOLD_STREAM_MAX_CLIENTS_PER_ADDRESS },
  };
  rememberSecrets(secretsOf(config));
  return config;
}

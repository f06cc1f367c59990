// The Leasehold CLI. Commands grow with the issues that need them; each one says what
// it did, fails with a sentence (never a stack trace) and a non-zero exit.
import { inspect, parseArgs } from 'node:util';
import { ConfigError, knownSecrets, redactUrlPassword, type Config } from '../lib/config';
import { loadAppConfig } from '../lib/root';
import { StoreLockedError } from '../lib/db/embedded';
import { describeStatus, MigrationError } from '../lib/db/migrate';
import { openStore } from '../lib/db/store';
import { terminalText } from '../lib/domain/display';
import { actionNamed, ADMIN_ACTIONS, type ForceAction } from '../lib/domain/admin-actions';
import { toPublicError } from '../lib/errors';
import { logToStderr } from '../lib/log';
import { redactUrlsIn, scrub, secretsOf } from '../lib/redact';

const USAGE = `Usage: leasehold <command> [options]

Commands:
  migrate              apply pending store migrations (the server also does this at start)
  migrate status       show which migrations are applied and pending
  migrate check        compare the migrated store with prisma/schema.prisma (drift check)
  config check [--config FILE]
                       validate the config file and the environment
  leases [--source S] [--state held|free|expired|unknown|stale|problems] [--q TEXT]
         [--sort key|problems|remaining|token|holder|transitions] [--limit N] [--cursor C | --all]
                       current leases, from a running server (LEASEHOLD_URL): a page of them
                       (10,000 unless --limit), or every page with --all
  lease <id>           one lease, its queue and recent events
  events <id> [--since 1h] [--types expired,taken_over] [--limit N]
  failovers [--since 24h]
  sources              each source's health
  collect              run the collector alone (when the server runs with LEASEHOLD_COLLECTOR=off, or beside it)
  snapshot [--config FILE]
                       read every configured source once and print its leases (no server, no store)
  audit verify         check the audit log's hash chain in the store (exit 1 if an entry was changed or removed)
  force-expire <id> --expect-holder H --expect-token N --reason "..." [--quarantine 15s] [--dry-run]
                       end a fenced lease now and raise its token (operator; exit 3 when it changed since seen)
  force-release <id> --expect-holder H --expect-token N|none --reason "..." [--acknowledge-unfenced] [--quarantine 15s] [--dry-run]
                       free a lease (an unfenced one: admin, with --acknowledge-unfenced)
  users add NAME --role viewer|operator|admin
                       make a user on the store (password from a prompt or standard input)
  users list | set-role NAME --role R | set-password NAME | disable NAME | enable NAME
  tokens create --name N --role R [--expires 30d] [--user NAME]   (R: viewer, operator, admin, reporter)
                       make an API token (shown once) for LEASEHOLD_TOKEN or Prometheus
  tokens list | revoke ID|NAME
  webhooks add --name N --url URL [--format native|slack|pagerduty|alertmanager-webhook|alertmanager]
               [--secret whsec_...] [--routing-key K] [--rules missed_renewal,failover]
                       add an alert endpoint (admin token); its signing secret is printed once
  webhooks list | test ID|NAME
                       endpoints with their delivery counts; send a test message now
  alerts list [--state firing|resolved] [--source S]
                       alerts firing and past

Options:
  --config FILE        the config file for config check, migrate, collect and snapshot
                       (default LEASEHOLD_CONFIG, else leasehold.config.json)
  --json               machine-readable output
  -h, --help           show this help

Environment:
  LEASEHOLD_URL        the server the read commands ask (default http://127.0.0.1:3000)
  LEASEHOLD_TOKEN      sent as a bearer token
  DATABASE_URL         PostgreSQL store; without it, the embedded store in LEASEHOLD_DATA_DIR (.leasehold/data)
  LEASEHOLD_CONFIG     config file (default leasehold.config.json)
`;

class UsageError extends Error {}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      config: { type: 'string' },
      source: { type: 'string' },
      state: { type: 'string' },
      q: { type: 'string' },
      since: { type: 'string' },
      types: { type: 'string' },
      limit: { type: 'string' },
      sort: { type: 'string' },
      cursor: { type: 'string' },
      all: { type: 'boolean' },
      role: { type: 'string' },
      name: { type: 'string' },
      expires: { type: 'string' },
      user: { type: 'string' },
      'expect-holder': { type: 'string' },
      'expect-token': { type: 'string' },
      reason: { type: 'string' },
      quarantine: { type: 'string' },
      'dry-run': { type: 'boolean' },
      'acknowledge-unfenced': { type: 'boolean' },
      url: { type: 'string' },
      format: { type: 'string' },
      secret: { type: 'string' },
      'routing-key': { type: 'string' },
      rules: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  const [command, sub] = positionals;
  if (values.help || command === undefined || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  const json = values.json ?? false;
  // The answer is on stdout; log lines (a new embedded store, migrations) go to stderr. `collect` runs like the server: its log is its output.
  if (command !== 'collect') logToStderr();
  // --config names the file for every command that reads one (as LEASEHOLD_CONFIG does).
  if (values.config !== undefined) {
    if (values.config.trim() === '') throw new UsageError('--config needs the path of a config file');
    process.env.LEASEHOLD_CONFIG = values.config;
  }
  // Each admin action is a command of its own name (lib/domain/admin-actions.ts).
  if (actionNamed(command, ADMIN_ACTIONS)) {
    const { forceCommand, ForceUsageError } = await import('./commands/force');
    try {
      return await forceCommand(command as ForceAction, sub, { ...values, json });
    } catch (error) {
      if (error instanceof ForceUsageError) throw new UsageError(error.message);
      throw error;
    }
  }
  switch (command) {
    case 'migrate':
      if (sub === undefined) return migrateCommand(json);
      if (sub === 'status') return migrateStatusCommand(json);
      if (sub === 'check') return migrateCheckCommand(json);
      throw new UsageError(`unknown migrate subcommand "${sub}" (expected status or check)`);
    case 'leases':
    case 'lease':
    case 'events':
    case 'failovers':
    case 'sources': {
      const { apiCommand } = await import('./commands/api');
      return apiCommand(command, positionals.slice(1), { ...values, json });
    }
    // The demo's fleet runs only inside the server: a collector or a snapshot on its own has no demo.
    case 'collect':
      return (await import('./commands/collect')).collectCommand(loadAppConfig({ env: { ...process.env, LEASEHOLD_DEMO: 'off' } }));
    case 'snapshot':
      return (await import('./commands/snapshot')).snapshotCommand(loadAppConfig({ env: { ...process.env, LEASEHOLD_DEMO: 'off' } }), json);
    case 'audit':
      return (await import('./commands/audit')).auditCommand(sub, json);
    case 'users':
      if (!['add', 'list', 'set-role', 'set-password', 'disable', 'enable'].includes(sub ?? '')) throw new UsageError(`unknown users subcommand "${sub ?? ''}" (expected add, list, set-role, set-password, disable or enable)`);
      return (await import('./commands/users')).usersCommand(sub, positionals.slice(2), { role: values.role, json });
    case 'tokens':
      if (!['create', 'list', 'revoke'].includes(sub ?? '')) throw new UsageError(`unknown tokens subcommand "${sub ?? ''}" (expected create, list or revoke)`);
      return (await import('./commands/tokens')).tokensCommand(sub, positionals.slice(2), { ...values, json });
    case 'webhooks':
    case 'alerts': {
      const { alertsCommand, webhooksCommand, AlertsUsageError } = await import('./commands/alerts');
      try {
        return command === 'webhooks' ? await webhooksCommand(sub, positionals.slice(2), { ...values, json }) : await alertsCommand(sub, { ...values, json });
      } catch (error) {
        if (error instanceof AlertsUsageError) throw new UsageError(error.message);
        throw error;
      }
    }
    case 'config':
      if (sub === 'check') return configCheckCommand(json);
      throw new UsageError(`unknown config subcommand "${sub ?? ''}" (expected check)`);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

function print(json: boolean, data: unknown, human: string) {
  process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${human}\n`);
}

function storeLabel(config: Config): string {
  return config.store.kind === 'postgres' ? 'PostgreSQL (DATABASE_URL)' : `embedded store ${config.store.dataDir}`;
}

async function migrateCommand(json: boolean): Promise<number> {
  const config = loadAppConfig();
  const lines: string[] = [];
  const store = await openStore(config.store, { log: (line) => (json ? lines.push(line) : console.log(line)) });
  try {
    const status = await store.migrationStatus();
    print(json, { store: config.store.kind, log: lines, status }, `${storeLabel(config)}: ${describeStatus(status)}`);
    return 0;
  } finally {
    await store.close();
  }
}

async function migrateStatusCommand(json: boolean): Promise<number> {
  const config = loadAppConfig();
  const store = await openStore(config.store, { migrate: false });
  try {
    const status = await store.migrationStatus();
    print(json, { store: config.store.kind, status }, `${storeLabel(config)}: ${describeStatus(status)}`);
    // Ahead (a newer release migrated it) fails too: the server would refuse to start on it.
    return status.pending.length === 0 && status.failed.length === 0 && status.unknown.length === 0 ? 0 : 1;
  } finally {
    await store.close();
  }
}

async function migrateCheckCommand(json: boolean): Promise<number> {
  const config = loadAppConfig();
  const { checkDrift } = await import('../lib/db/drift');
  const store = await openStore(config.store, { migrate: false });
  try {
    const differences = await store.withSql((sql) => checkDrift(sql));
    print(
      json,
      { store: config.store.kind, drift: differences },
      differences.length === 0
        ? `${storeLabel(config)}: matches prisma/schema.prisma`
        : `${storeLabel(config)} differs from prisma/schema.prisma:\n${differences.map((d) => `  - ${d}`).join('\n')}`,
    );
    return differences.length === 0 ? 0 : 1;
  } finally {
    await store.close();
  }
}

function configCheckCommand(json: boolean): number {
  const config = loadAppConfig();
  const summary = config.sources.map((source) => `${source.name} (${source.backend})`).join(', ');
  print(
    json,
    { file: config.file, sources: config.sources.map((s) => ({ name: s.name, backend: s.backend })), store: config.store.kind },
    `${config.file ?? 'no config file (defaults)'}: valid; ${config.sources.length} source${config.sources.length === 1 ? '' : 's'}${summary ? `: ${summary}` : ''}; store: ${storeLabel(config)}`,
  );
  return 0;
}

/**
 * What an error may print: URLs redacted, and every secret this process knows scrubbed (the
 * configs it loaded, DATABASE_URL, LEASEHOLD_URL's password, LEASEHOLD_TOKEN).
 */
function safe(text: string): string {
  const env = { LEASEHOLD_URL: process.env.LEASEHOLD_URL, LEASEHOLD_TOKEN: process.env.LEASEHOLD_TOKEN };
  // A server's or a backend's words may carry control and bidi characters: each line is made
  // safe for the terminal (the line breaks of a multi-line message are kept).
  return scrub(redactUrlPassword(text), [...knownSecrets(), ...secretsOf({ env })])
    .split('\n')
    .map(terminalText)
    .join('\n');
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`leasehold: ${safe((error as Error).message)}\n\n${USAGE}`);
      process.exit(2);
    }
    const named = ['ApiCallError', 'CommandError', 'UserExistsError', 'TokenNameTakenError'];
    if (error instanceof ConfigError || error instanceof StoreLockedError || error instanceof MigrationError || named.includes((error as Error)?.name) || (error as Error)?.constructor?.name === 'CommandError') {
      console.error(`leasehold: ${safe((error as Error).message)}`);
    } else {
      console.error(`leasehold: ${safe(toPublicError(error, () => {}).message.replace(/ \(reference.*$/, ''))}`);
      // The whole error, cause and all, but for the secrets it may quote.
      if (process.env.LEASEHOLD_DEBUG) console.error(safe(redactUrlsIn(inspect(error, { depth: 6 }))));
    }
    process.exit(1);
  },
);

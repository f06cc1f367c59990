// The server's log: one pino logger for the process, a child per area
// (`logger('collector')` writes `"area":"collector"`), on stdout. JSON lines (level, time,
// msg, ...) when stdout is not a terminal; one readable line each (pino-pretty, as a
// synchronous stream in this thread, not a worker transport: Next bundles server code)
// when it is. LEASEHOLD_LOG_LEVEL sets the level (fatal, error, warn, info, debug, trace,
// silent; default info).
//
// Secrets: fields named password, token, secret, authorization or cookie are censored at
// any depth (pino's `redact` for the top two levels, the field walk below for deeper ones),
// and every string that is written (the message, field values, an error's message and
// stack) has URL passwords and secret query values redacted (lib/redact.ts redactUrlsIn)
// and every secret of the loaded config scrubbed.
//
// The CLI (bin/) prints to its user with console on purpose; this is for the server, the
// collector and the demo fleet.
import pino, { type DestinationStream, type Level, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { knownSecrets, REDACTED, redactUrlsIn, scrub } from './redact';

export type { Logger } from 'pino';

const LEVELS: readonly string[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const SECRET_FIELDS = ['password', 'token', 'secret', 'authorization', 'cookie'];
const SECRET_FIELD = new RegExp(`^(?:${SECRET_FIELDS.join('|')})$`, 'i');
const MAX_DEPTH = 10;

/** Text with URL passwords, `password=...` pairs and every known config secret replaced by `***`. */
export function cleanText(text: string): string {
  return scrub(redactUrlsIn(text), knownSecrets());
}

/** A value as it will be written: strings cleaned, secret-named fields censored, errors serialized. */
function clean(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return cleanText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return '[too deep]';
  if (value instanceof Error) return clean(pino.stdSerializers.err(value), depth + 1);
  if (Array.isArray(value)) return value.map((item: unknown) => clean(item, depth + 1));
  // What JSON.stringify would write for it (a URL's href, a Date's ISO string), cleaned.
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return clean(toJSON.call(value), depth + 1);
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, SECRET_FIELD.test(key) ? REDACTED : clean(item, depth + 1)]),
  );
}

/** LEASEHOLD_LOG_LEVEL, or info; a value that is not a level is reported and ignored. */
function levelFromEnv(): { level: string; problem?: string } {
  const raw = process.env.LEASEHOLD_LOG_LEVEL?.trim().toLowerCase();
  if (!raw) return { level: 'info' };
  if (LEVELS.includes(raw)) return { level: raw };
  return {
    level: 'info',
    problem: `environment variable LEASEHOLD_LOG_LEVEL: expected one of ${LEVELS.join(', ')}, found "${process.env.LEASEHOLD_LOG_LEVEL}"; logging at info`,
  };
}

export type LoggerOptions = {
  /** Where the lines go (default stdout). */
  destination?: DestinationStream;
  /** Default LEASEHOLD_LOG_LEVEL, else info. */
  level?: Level | 'silent';
  /** Readable lines instead of JSON (default: when no destination is given and stdout is a terminal). */
  pretty?: boolean;
};

export function createLogger(options: LoggerOptions = {}): Logger {
  const fromEnv = options.level ? { level: options.level } : levelFromEnv();
  const readable = options.pretty ?? (options.destination === undefined && process.stdout.isTTY === true);
  // Synchronous writes: a line logged just before process.exit (a fatal start-up problem,
  // the end of a shutdown) is not lost.
  const destination = readable
    ? pretty({
        destination: options.destination ?? 1,
        sync: true,
        colorize: options.destination === undefined,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,area',
        messageFormat: '{if area}{area}: {end}{msg}',
      })
    : (options.destination ?? pino.destination({ dest: 1, sync: true }));
  const logger = pino(
    {
      level: fromEnv.level,
      redact: { paths: [...SECRET_FIELDS, ...SECRET_FIELDS.map((field) => `*.${field}`)], censor: REDACTED },
      serializers: {
        err: (error: unknown) => clean(error),
        msg: (message: unknown) => (typeof message === 'string' ? cleanText(message) : message),
      },
      formatters: {
        bindings: (bindings) => clean(bindings) as Record<string, unknown>,
        // `err` is left to its serializer (above), which cleans it after pino's own.
        log: (object) =>
          Object.fromEntries(
            Object.entries(object).map(([key, value]) => [key, SECRET_FIELD.test(key) ? REDACTED : key === 'err' ? value : clean(value)]),
          ),
      },
    },
    destination,
  );
  if (fromEnv.problem) logger.warn(fromEnv.problem);
  return logger;
}

// Pages, route handlers and instrumentation.ts each get their own copy of this module
// under Next: one logger for the process, on globalThis like the store.
const state = globalThis as typeof globalThis & { __leaseholdLog?: Logger };

/** The process's root logger. */
export function rootLogger(): Logger {
  state.__leaseholdLog ??= createLogger();
  return state.__leaseholdLog;
}

/**
 * The CLI's commands print their answers on stdout (`--json` included): their log lines go to
 * stderr instead, readable when it is a terminal.
 */
export function logToStderr(): void {
  state.__leaseholdLog = createLogger({ destination: pino.destination({ dest: 2, sync: true }), pretty: process.stderr.isTTY === true });
}

/** The logger of one area of the server (`collector`, `store`, `demo`, ...). */
export function logger(area: string): Logger {
  return rootLogger().child({ area });
}

/**
 * A `(line: string) => void` writing to `log`, for code that takes one (the collector and its
 * observers, the demo fleet, the store's migrations): info, or warn for a line that starts
 * with `warning:`.
 */
export function linesTo(log: Logger): (line: string) => void {
  return (line) => (line.startsWith('warning:') ? log.warn(line) : log.info(line));
}

/** linesTo an area's child of the process's logger. */
export function lineLogger(area: string): (line: string) => void {
  return linesTo(logger(area));
}

/** A logger that writes nothing (a one-off worker whose outcome its caller reports, a test). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

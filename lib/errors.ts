// Typed errors from lib, turned into what a person may see: a status, a code and a
// sentence. No stack traces, connection strings or secrets leave this function.
import { randomUUID } from 'node:crypto';
import { ConfigError, knownSecrets, redactUrlPassword } from './config';
import { redactUrlsIn, scrub } from './redact';
import { logger } from './log';
import { StoreLockedError } from './db/embedded';
import { MigrationError } from './db/migrate';
import { TelemetryRefusedError } from './domain/holder-telemetry';
import { InvalidLeaseIdError } from './domain/lease-id';

export type PublicError = { status: number; error: string; message: string };

/**
 * An error whose message is written for the person who made the request, and that says how
 * it is answered (lib/api's InvalidParameterError, NotFoundError): shown as it is.
 */
export abstract class RequestError extends Error {
  abstract readonly status: number;
  abstract readonly code: string;
  /** Headers the answer carries (WWW-Authenticate with a 401, Retry-After with a 429). */
  readonly headers?: Record<string, string>;
}

const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
};

export function toPublicError(error: unknown, log: (line: string) => void = (line) => logger('server').error(line)): PublicError {
  if (error instanceof ConfigError) {
    return { status: 500, error: 'config_invalid', message: error.message };
  }
  if (error instanceof StoreLockedError) {
    return { status: 503, error: 'store_locked', message: error.message };
  }
  if (error instanceof MigrationError) {
    return { status: 503, error: 'store_migration_failed', message: scrub(redactUrlPassword(error.message), knownSecrets()) };
  }
  if (error instanceof InvalidLeaseIdError) {
    return { status: 400, error: 'invalid_lease_id', message: error.message };
  }
  if (error instanceof TelemetryRefusedError) {
    return { status: 422, error: error.code, message: error.message };
  }
  if (error instanceof RequestError) {
    return { status: error.status, error: error.code, message: error.message };
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code in NETWORK_CODES) {
    return { status: 503, error: 'store_unavailable', message: `The store cannot be reached (${NETWORK_CODES[code]}).` };
  }
  if (error instanceof Error && /Connection terminated|timeout expired/i.test(error.message)) {
    return { status: 503, error: 'store_unavailable', message: 'The store cannot be reached (connection timed out).' };
  }
  // Anything else is a bug: log it whole on the server (but for any secret it quotes: a
  // driver's error may carry the store's URL), give the person a reference.
  const reference = randomUUID().slice(0, 8);
  const details = error instanceof Error ? (error.stack ?? error.message) : String(error);
  log(`error ${reference}: ${scrub(redactUrlsIn(details), knownSecrets())}`);
  return {
    status: 500,
    error: 'internal',
    message: `Something went wrong on the server (reference ${reference}); the details are in the server log.`,
  };
}

/** The JSON error reply of docs/api.md. */
export function errorResponse(error: unknown, headers?: Record<string, string>): Response {
  const { status, ...body } = toPublicError(error);
  const own = error instanceof RequestError ? error.headers : undefined;
  return Response.json(body, { status, headers: { 'Cache-Control': 'no-store', ...own, ...headers } });
}

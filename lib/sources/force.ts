// Guarded actions, the backend half (docs/admin-actions.md): force-expire and force-release of
// one lease, each applied as ONE compare-and-set against the holder and token the person saw,
// so that it never acts on a state nobody saw. This file is the contract, its typed errors and
// the checks every request passes before any backend is asked (no I/O). The operations are
// per backend (postgres/force.ts, redis/force.ts, etcd/force.ts), chosen by force-registry.ts.
//
// What every implementation promises:
// - execute() either applies the whole action or nothing: when the lease is not in the
//   expected state it changes nothing and throws ForceConflictError with the state it found,
//   read in the same atomic step wherever the backend allows it.
// - A fenced lease (one with a token) is never freed without its token being raised in the
//   same atomic step, and every later grant made through lib/lease gets a higher token than
//   the one reported (etcd elections: see etcd/force.ts for queued candidates). This holds for
//   force-release too: on a fenced layout force-release bumps the token exactly as
//   force-expire does, because freeing a fenced lease without a bump is the one thing fencing
//   exists to prevent. The two differ only in what the lease looks like afterwards where the
//   backend can tell the difference (a Postgres lease row: expired, or released).
// - An unfenced lease cannot be force-expired (ForceNotPossibleError 'unfenced'); it can only
//   be force-released, by someone who accepts that the old holder may still act.
// - plan() changes nothing. It may read the backend to learn the layout and whom the action
//   would hit; its steps are what execute() sends, never a password or a URL.
import { EXACT_TEXT_MAX_BYTES, quotedExactText, unescapeText } from '../domain/display';

export type ForceAction = 'force-expire' | 'force-release';

/** The reserved holder that keeps a lease during a quarantine (Consul's lock-delay, done safely). */
export { QUARANTINE_HOLDER } from '../domain/quarantine';
/** The longest quarantine: an hour. A lease held longer by nobody is an outage, not a safety margin. */
export const MAX_QUARANTINE_MS = 3_600_000;
/** A token has at most this many digits (2^256 has 78), as the adapters read them. */
export const MAX_TOKEN_DIGITS = 78;
/** A key or holder as Leasehold shows it is at most this long: 1 KiB escaped (4 characters a byte), plus a table name. */
export const MAX_EXACT_CHARS = 4 * EXACT_TEXT_MAX_BYTES + 256;

export type ForceRequest = {
  action: ForceAction;
  /** The lease key inside the source, exactly as the adapter reports it in Observation.key. */
  key: string;
  /** The holder the person saw, exactly as the adapter reported it. */
  expectedHolder: string;
  /** The token the person saw (a decimal string), or null for an unfenced lease. */
  expectedToken: string | null;
  /** After freeing the lease, hold it this long under QUARANTINE_HOLDER (1 ms to MAX_QUARANTINE_MS). */
  quarantineMs?: number;
};

/** One thing sent to the backend: SQL text, a Lua script or an etcd request, with its arguments as text. */
export type ForceStep = { what: string; statement: string; args: string[] };

export type ForcePlan = {
  /** The layout the lease is in: 'leasehold table', 'shedlock table', 'advisory lock', 'redis lock', 'etcd election'... */
  layout: string;
  fenced: boolean;
  steps: ForceStep[];
  /** What the plan learnt reading the backend (the session an advisory force would end, the etcd key it would delete). */
  detail: Record<string, unknown>;
};

export type ForceDone = {
  /** The token the lease had (the one the old holder still carries); null for an unfenced lease. */
  previousToken: string | null;
  /** The token it was raised to in the same step; null for an unfenced lease. */
  newToken: string | null;
  detail: Record<string, unknown>;
};

/** What the backend holds now: `holder` null when nobody holds it (free, expired or released). */
export type CurrentState = { holder: string | null; token: string | null };

/**
 * The lease is not in the state the person saw: nothing was done. `current`: what it is now
 * (null when the lease does not exist at all), read in the same step where the backend allows.
 */
export class ForceConflictError extends Error {
  constructor(
    readonly key: string,
    readonly current: CurrentState | null,
    detail?: string,
  ) {
    // The key and the holder are exact text (escaped once already, as the API shows them): only cut.
    super(`${quotedExactText(key, 120)} is not in the state you saw, so nothing was done: ${describeCurrent(current)}${detail ? ` (${detail})` : ''}`);
    this.name = 'ForceConflictError';
  }
}

function describeCurrent(current: CurrentState | null): string {
  if (current === null) return 'it does not exist now';
  const token = current.token === null ? 'no token' : `token ${current.token}`;
  return current.holder === null ? `nobody holds it now (${token})` : `it is held by "${quotedExactText(current.holder, 120)}" with ${token}`;
}

/**
 * The action cannot be done on this lease, whatever its state: `unfenced` (force-expire of a
 * lease without a token), `not_supported` (the layout or the source cannot do it atomically),
 * `not_found` (the key is not one this source reports), `invalid` (the request itself).
 * Nothing was sent to the backend, or only reads.
 */
export type ForceRefusal = 'unfenced' | 'not_supported' | 'not_found' | 'invalid' | 'backend_refused';

export class ForceNotPossibleError extends Error {
  constructor(
    readonly code: ForceRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'ForceNotPossibleError';
  }
}

/**
 * One source's guarded actions. Every method may also fail with SourceUnavailableError (the
 * backend did not answer; for execute(), nothing is known about whether it was applied).
 */
export interface ForceActions {
  /** What execute() would send, and to whom; changes nothing. ForceNotPossibleError when it cannot be done. */
  plan(request: ForceRequest, signal?: AbortSignal): Promise<ForcePlan>;
  /** Applies it as one compare-and-set. ForceConflictError: not in the expected state, nothing done. ForceNotPossibleError as plan(). */
  execute(request: ForceRequest, signal: AbortSignal): Promise<ForceDone>;
  close(): Promise<void>;
}

/** A request that passed checkRequest: its token as a number. */
export type CheckedRequest = ForceRequest & { token: bigint | null };

const invalid = (message: string) => new ForceNotPossibleError('invalid', message);

/** Checks a request's shape before any backend is asked; ForceNotPossibleError ('invalid', or 'unfenced'). */
export function checkRequest(request: ForceRequest): CheckedRequest {
  const { action, key, expectedHolder, expectedToken, quarantineMs } = (request ?? {}) as Partial<ForceRequest>;
  if (action !== 'force-expire' && action !== 'force-release') throw invalid('the action is force-expire or force-release');
  if (typeof key !== 'string' || key.length === 0) throw invalid('the lease key is missing');
  if (key.length > MAX_EXACT_CHARS) {
    throw invalid(`a lease key as Leasehold reports it has at most ${MAX_EXACT_CHARS} characters (a longer value is shown by its head and digest); got ${key.length}`);
  }
  if (typeof expectedHolder !== 'string' || expectedHolder.length === 0) throw invalid('the expected holder is missing');
  if (expectedHolder.length > MAX_EXACT_CHARS) throw invalid(`a holder as Leasehold reports it has at most ${MAX_EXACT_CHARS} characters; got ${expectedHolder.length}`);
  if (expectedToken !== null && (typeof expectedToken !== 'string' || !/^\d{1,78}$/.test(expectedToken))) {
    throw invalid(`the expected token is a whole number of at most ${MAX_TOKEN_DIGITS} digits, or null for an unfenced lease`);
  }
  if (quarantineMs !== undefined && (!Number.isInteger(quarantineMs) || quarantineMs < 1 || quarantineMs > MAX_QUARANTINE_MS)) {
    throw invalid(`a quarantine is a whole number of milliseconds from 1 to ${MAX_QUARANTINE_MS}`);
  }
  if (action === 'force-expire' && expectedToken === null) {
    throw new ForceNotPossibleError('unfenced', 'the lease has no fencing token: it cannot be force-expired, only force-released (the old holder may still act)');
  }
  const token = expectedToken === null ? null : BigInt(expectedToken);
  return { action, key, expectedHolder, expectedToken: token === null ? null : token.toString(), token, ...(quarantineMs !== undefined ? { quarantineMs } : {}) };
}

// The long form of exact text: "<head>…[<n> bytes, sha256:<digest>]" (lib/domain/display.ts).
const DIGEST_FORM = /…\[\d+ bytes, (sha1|sha256):[0-9a-f]+\]$/;

/** Whether a key or holder is in the long form of exact text, which names a value by its head, length and digest. */
export const isDigestForm = (text: string) => DIGEST_FORM.test(text);

/**
 * The bytes an exact text (a key or holder as the adapters report it) stands for.
 * ForceNotPossibleError: `not_supported` for the long form, which names a value by its digest
 * and cannot be compared in one atomic step; `invalid` for text that is no exact text, or
 * that stands for more bytes than any reported value (longer ones are reported by digest).
 */
export function bytesOfExact(text: string, what: 'key' | 'holder' | 'row name'): Buffer {
  if (DIGEST_FORM.test(text)) {
    throw new ForceNotPossibleError(
      'not_supported',
      `the ${what} is longer than ${EXACT_TEXT_MAX_BYTES} bytes and is shown by its digest: it cannot be compared in one atomic step; use the backend's own tools`,
    );
  }
  const bytes = unescapeText(text);
  if (bytes === null) throw invalid(`the ${what} is not written as Leasehold shows it (a backslash starts \\\\, \\xNN or \\uNNNN, and control characters are escaped)`);
  if (bytes.length > EXACT_TEXT_MAX_BYTES) {
    throw invalid(`a ${what} of ${bytes.length} bytes is never reported whole (over ${EXACT_TEXT_MAX_BYTES} bytes Leasehold shows its head and digest)`);
  }
  return Buffer.from(bytes);
}

/** The text those bytes are in PostgreSQL, or null when no text column can hold them (invalid UTF-8, NUL). */
export function postgresText(bytes: Buffer): string | null {
  if (bytes.includes(0)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** Whether a lease found in `current` is the one the request expected. */
export function isExpected(request: CheckedRequest, current: CurrentState | null): boolean {
  return current !== null && current.holder === request.expectedHolder && current.token === request.expectedToken;
}

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
//   backend can tell the difference (a Postgres lease row: expired, or released; the row's
//   `clearsHolder`).
// - An unfenced lease cannot be force-expired (ForceNotPossibleError 'unfenced': the row is
//   `fencedOnly`); it can only be force-released, by someone who accepts that the old holder
//   may still act.
// The actions are the rows of lib/domain/admin-actions.ts: checkRequest hands the backend the
// request's row, and a backend branches on its properties, never on an action's name.
// - plan() changes nothing. It may read the backend to learn the layout and whom the action
//   would hit; its steps are what execute() sends, never a password or a URL.
import { z } from 'zod';
import { ADMIN_ACTIONS, actionNamed, unfencedAlternatives, type AdminActionRow, type AdminActionTable, type ForceAction } from '../domain/admin-actions';
import { EXACT_TEXT_MAX_BYTES, quotedExactText, unescapeText } from '../domain/display';

/** The actions' names: the table's (lib/domain/admin-actions.ts). */
export type { ForceAction };

/** The reserved holder that keeps a lease during a quarantine (Consul's lock-delay, done safely). */
export { QUARANTINE_HOLDER } from '../domain/quarantine';
/** The longest quarantine: an hour. A lease held longer by nobody is an outage, not a safety margin. */
export const MAX_QUARANTINE_MS = 3_600_000;
/** A token has at most this many digits (2^256 has 78), as the adapters read them. */
export const MAX_TOKEN_DIGITS = 78;
/** A key or holder as Leasehold shows it is at most this long: 1 KiB escaped (4 characters a byte), plus a table name. */
export const MAX_EXACT_CHARS = 4 * EXACT_TEXT_MAX_BYTES + 256;

/**
 * The limits of what the person saw, written once: checkRequest checks a request with them,
 * and the API's body is made of them (lib/admin/force-request.ts), so a body the API took is
 * never refused here for them, and a request made without the API (the CLI's server, a test)
 * meets the same limits.
 */
export const SEEN_FIELDS = {
  expectedHolder: z
    .string({ error: 'expected the holder you saw (text)' })
    .min(1, { error: 'expected the holder you saw, not an empty text' })
    .max(MAX_EXACT_CHARS, { error: `expected the holder you saw, as Leasehold shows it: at most ${MAX_EXACT_CHARS} characters` }),
  expectedToken: z
    .string({ error: 'expected the token you saw as a decimal string, or null for an unfenced lease' })
    .regex(new RegExp(`^\\d{1,${MAX_TOKEN_DIGITS}}$`), { error: `expected the token you saw as a decimal string of at most ${MAX_TOKEN_DIGITS} digits` })
    .nullable(),
  quarantineMs: z
    .number({ error: 'expected a quarantine in milliseconds' })
    .int({ error: 'expected a whole number of milliseconds' })
    .min(1, { error: 'expected a quarantine of at least 1 ms' })
    .max(MAX_QUARANTINE_MS, { error: `expected at most ${MAX_QUARANTINE_MS} ms (an hour)` })
    .optional(),
};

/** The lease key as the adapter reports it. */
const KEY = z
  .string({ error: 'the lease key is missing' })
  .min(1, { error: 'the lease key is missing' })
  .max(MAX_EXACT_CHARS, {
    error: (issue) => `a lease key as Leasehold reports it has at most ${MAX_EXACT_CHARS} characters (a longer value is shown by its head and digest); got ${String((issue.input as string).length)}`,
  });

/** A request's fields besides its action: the lease key, and what the person saw. */
const REQUEST_FIELDS = z.object({ key: KEY, ...SEEN_FIELDS });

/**
 * The brand of a value a schema made of SEEN_FIELDS has parsed (the API's body,
 * lib/admin/force-request.ts): its seen fields are not checked again (checkedRequest).
 */
export type SeenChecked = z.core.$brand<'SeenChecked'>;

/** What the person saw, as a schema made of SEEN_FIELDS parsed it. */
export type CheckedSeen = { expectedHolder: string; expectedToken: string | null; quarantineMs?: number } & SeenChecked;

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

/**
 * A request that passed checkRequest: its token as a number, and its action's row of the table
 * (lib/domain/admin-actions.ts). A backend branches on the row's properties (fencedOnly,
 * clearsHolder), never on the action's name.
 */
export type CheckedRequest = ForceRequest & { token: bigint | null; row: AdminActionRow; readonly [CHECKED]: true };

/** Marks a request checkRequest or checkedRequest made: checked once, passed through after. */
const CHECKED: unique symbol = Symbol('a checked force request');

const invalid = (message: string) => new ForceNotPossibleError('invalid', message);

/**
 * Checks a request before any backend is asked; ForceNotPossibleError ('invalid', or 'unfenced'
 * for a fencedOnly action without a token). `actions`: the table (the admin actions unless a test hands its own).
 */
export function checkRequest(request: ForceRequest, actions: AdminActionTable = ADMIN_ACTIONS): CheckedRequest {
  if ((request as Partial<CheckedRequest> | null)?.[CHECKED] === true) return request as CheckedRequest;
  const row = rowOf((request as Partial<ForceRequest> | null)?.action, actions);
  const parsed = REQUEST_FIELDS.safeParse(request);
  if (!parsed.success) throw invalidIssue(parsed.error);
  return checked(row, parsed.data.key, parsed.data, actions);
}

/**
 * The request for `action` on `key` from what the person saw, as a schema made of SEEN_FIELDS
 * parsed it (the API's body): the key is checked (it comes from the store, not the body) and
 * the action's rule, not the seen fields again. What checkRequest then passes through.
 */
export function checkedRequest(action: ForceAction, key: string, seen: CheckedSeen, actions: AdminActionTable = ADMIN_ACTIONS): CheckedRequest {
  const row = rowOf(action, actions);
  const parsedKey = KEY.safeParse(key);
  if (!parsedKey.success) throw invalidIssue(parsedKey.error, 'key');
  return checked(row, parsedKey.data, seen, actions);
}

function rowOf(action: unknown, actions: AdminActionTable): AdminActionRow {
  const row = actionNamed(action, actions);
  if (!row) throw invalid(`the action is ${Object.keys(actions).join(' or ')}`);
  return row;
}

function invalidIssue(error: z.ZodError, path?: string): ForceNotPossibleError {
  const issue = error.issues[0]!;
  return invalid(`${path ?? issue.path.join('.')}: ${issue.message}`);
}

function checked(row: AdminActionRow, key: string, { expectedHolder, expectedToken, quarantineMs }: Pick<ForceRequest, 'expectedHolder' | 'expectedToken' | 'quarantineMs'>, actions: AdminActionTable): CheckedRequest {
  if (row.fencedOnly && expectedToken === null) {
    throw new ForceNotPossibleError('unfenced', `the lease has no fencing token: it cannot be ${row.done}, only ${unfencedAlternatives(actions)} (the old holder may still act)`);
  }
  const token = expectedToken === null ? null : BigInt(expectedToken);
  const request = { action: row.name as ForceAction, key, expectedHolder, expectedToken: token === null ? null : token.toString(), token, row, ...(quarantineMs !== undefined ? { quarantineMs } : {}) };
  // The mark is not enumerable: a copy (`{ ...request, key: other }`) is not the checked request, and is checked again.
  return Object.defineProperty(request, CHECKED, { value: true, enumerable: false }) as CheckedRequest;
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

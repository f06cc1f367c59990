// The audit log's hash chain: each entry's hash is sha256(prevHash + "\n" + canonical(entry)),
// hex, with prevHash "" for the first entry. Changing, removing or reordering an entry breaks
// the chain at that entry or the next (lib/db/audit.ts verifyAuditChain).
//
// The canonical form is JSON without whitespace, in the manner of RFC 8785: object keys sorted
// by UTF-16 code units at every depth, numbers as ECMAScript writes them, strings as
// JSON.stringify escapes them. The entry is one object of its columns (not prevHash or hash):
// ids and tokens as decimal strings, `at` as an ISO time with milliseconds, `detail` as its JSON,
// and a column that is null left out (so a column added later, null in older entries, leaves
// their hashes as they were).
import { createHash } from 'node:crypto';
import type { AuditPhase, AuthMethod, JsonValue } from '../domain/audit';

/** What an entry's hash covers: every column but prevHash and hash. */
export type AuditContent = {
  id: bigint;
  at: Date;
  requestId: string;
  phase: AuditPhase;
  status: number | null;
  action: string;
  actor: string;
  actorRole: string;
  authMethod: AuthMethod;
  clientAddress: string | null;
  leaseId: string | null;
  reason: string | null;
  expectedHolder: string | null;
  expectedToken: bigint | null;
  actualHolder: string | null;
  actualToken: bigint | null;
  previousToken: bigint | null;
  newToken: bigint | null;
  dryRun: boolean;
  detail: JsonValue | null;
};

/** A JSON value's canonical text: keys sorted at every depth, no whitespace. */
export function canonicalJson(value: JsonValue): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key]!)}`).join(',')}}`;
}

const decimal = (value: bigint | null) => (value === null ? null : value.toString());

/** The entry's canonical text (see the top of this file). */
export function canonicalAudit(entry: AuditContent): string {
  const fields: Record<string, JsonValue> = {
    id: entry.id.toString(),
    at: entry.at.toISOString(),
    requestId: entry.requestId,
    phase: entry.phase,
    status: entry.status,
    action: entry.action,
    actor: entry.actor,
    actorRole: entry.actorRole,
    authMethod: entry.authMethod,
    clientAddress: entry.clientAddress,
    leaseId: entry.leaseId,
    reason: entry.reason,
    expectedHolder: entry.expectedHolder,
    expectedToken: decimal(entry.expectedToken),
    actualHolder: entry.actualHolder,
    actualToken: decimal(entry.actualToken),
    previousToken: decimal(entry.previousToken),
    newToken: decimal(entry.newToken),
    dryRun: entry.dryRun,
    detail: entry.detail,
  };
  for (const key of Object.keys(fields)) if (fields[key] === null) delete fields[key];
  return canonicalJson(fields);
}

/** sha256(prevHash + "\n" + canonical(entry)) in hex; prevHash is "" for the first entry. */
export function auditHash(prevHash: string | null, entry: AuditContent): string {
  return createHash('sha256')
    .update(`${prevHash ?? ''}\n${canonicalAudit(entry)}`, 'utf8')
    .digest('hex');
}

// ---------------------------------------------------------------------------- what the store keeps

/** Thrown for an entry the store could not keep exactly as it was hashed. */
export class AuditInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuditInputError';
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text as PostgreSQL gives it back: a lone UTF-16 surrogate becomes U+FFFD (the driver's UTF-8
 * encoding does so anyway; the hash must cover what is stored). NUL cannot be stored at all.
 */
export function storableText(value: string, what: string): string {
  if (value.includes('\u0000')) throw new AuditInputError(`audit entry: ${what} contains NUL (U+0000), which the store cannot hold`);
  return value.replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * A detail value as the store's jsonb gives it back: what JSON.stringify keeps (bigints as
 * decimal strings, dates as ISO strings, undefined and functions dropped, NaN as null), with
 * storable text in keys and strings.
 */
export function storableJson(value: unknown): JsonValue | null {
  if (value === undefined) return null;
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  if (text === undefined) return null;
  return clean(JSON.parse(text) as JsonValue);
}

function clean(value: JsonValue): JsonValue {
  if (typeof value === 'string') return storableText(value, 'detail');
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(clean);
  // A prototype-less object: a key named __proto__ stays a key.
  const out = Object.create(null) as Record<string, JsonValue>;
  for (const [key, item] of Object.entries(value)) out[storableText(key, 'detail')] = clean(item);
  return out;
}

/** A fencing token as the NUMERIC(78,0) columns hold it: a whole number of at most 78 digits. */
export function storableToken(value: bigint | string | number | null | undefined, what: string): bigint | null {
  if (value === null || value === undefined) return null;
  let token: bigint;
  if (typeof value === 'bigint') token = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) token = BigInt(value);
  else if (typeof value === 'string' && /^-?\d{1,78}$/.test(value)) token = BigInt(value);
  else throw new AuditInputError(`audit entry: ${what} must be a whole number (a decimal string or a bigint), not ${String(value).slice(0, 100)}`);
  if ((token < 0n ? -token : token).toString().length > 78) throw new AuditInputError(`audit entry: ${what} has more than 78 digits`);
  return token;
}

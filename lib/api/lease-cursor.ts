// The `cursor` of GET /api/v1/leases: where the next page starts, opaque to clients
// (base64url of a small JSON object). Two kinds, by the list's order:
//   sort=key (the default): the last lease sent, by (source, key): the next page starts after
//     it wherever it now is, so a walk over pages sends every lease that stayed, once.
//     A key is kept to its first KEY_CHARS characters (a key may be 10 kB, a URL not) with a
//     digest of the whole key, which finds the exact lease among those sharing that start.
//   any other sort: an offset into the list as ordered at each request (remaining time and
//     problems move): a lease may then be sent twice or not at all; docs/api.md says so.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { SORTS, type Sort } from '../domain/overview';

/** How much of a key a cursor keeps. */
export const KEY_CHARS = 512;
/** The longest cursor accepted: a source name, KEY_CHARS of key (6 bytes of UTF-8 each at worst in JSON escapes), the digest. */
export const MAX_CURSOR_CHARS = 8_192;

export type LeaseCursor =
  | { kind: 'after'; source: string; keyStart: string; digest: string | null }
  | { kind: 'offset'; sort: Exclude<Sort, 'key'>; offset: number };

const wire = z.union([
  z.strictObject({ s: z.string().max(64), k: z.string().max(KEY_CHARS), d: z.string().regex(/^[0-9a-f]{16}$/).optional() }),
  z.strictObject({ o: z.number().int().min(0).max(10_000_000), sort: z.enum(SORTS.filter((sort) => sort !== 'key') as [Exclude<Sort, 'key'>, ...Exclude<Sort, 'key'>[]]) }),
]);

/** A short digest of a whole key: tells apart keys that share their first KEY_CHARS characters. */
export const keyDigest = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 16);

export function encodeAfter(source: string, key: string): string {
  const long = key.length > KEY_CHARS;
  return Buffer.from(JSON.stringify(long ? { s: source, k: key.slice(0, KEY_CHARS), d: keyDigest(key) } : { s: source, k: key })).toString('base64url');
}

export function encodeOffset(sort: Exclude<Sort, 'key'>, offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset, sort })).toString('base64url');
}

/** The cursor `text` stands for, or null when it is none this server made. */
export function decodeCursor(text: string): LeaseCursor | null {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return null;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const parsed = wire.safeParse(json);
  if (!parsed.success) return null;
  const value = parsed.data;
  return 'o' in value ? { kind: 'offset', sort: value.sort, offset: value.o } : { kind: 'after', source: value.s, keyStart: value.k, digest: value.d ?? null };
}

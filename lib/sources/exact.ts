// Exact text of keys and holders read from a backend (lib/domain/display.ts), with the digest
// a long value needs computed here: the domain does no hashing of its own.
import { createHash } from 'node:crypto';
import { exactText, exactTextOf } from '../domain/display';

/** 128 bits of SHA-256, as the exact text of a long value shows it. */
export function sha256Digest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex').slice(0, 32)}`;
}

/** The exact text of a whole value: its escape, or its head and digest when it is long. */
export function exactOf(value: Uint8Array | string): string {
  return exactTextOf(value, sha256Digest);
}

/** The exact text of a value the backend sent only the head of, with its own digest (Redis: SHA-1 in Lua). */
export function exactOfHead(head: Uint8Array, totalBytes: number, digest: string | null): string {
  return exactText(head, totalBytes, digest);
}

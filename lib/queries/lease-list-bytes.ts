// The lease list as bytes (lease-cache.ts keeps it): each lease as UTF-8 JSON split around
// `remainingMs`, the one field that depends on the moment of the request, and the whole list
// in chunks with a blank slot of fixed width where each remainingMs goes.
import { hasCountdown, remainingMsAt } from '../domain/countdown';
import type { LeaseView } from '../domain/types';

/** Leases per chunk of the assembled list: an update rebuilds only its chunk. */
export const CHUNK = 256;
export const COMMA = Buffer.from(',');
export const NULL = Buffer.from('null');

export type Entry = {
  view: LeaseView;
  /** UTF-8 JSON of the lease up to and after the remainingMs value. */
  head: Buffer;
  tail: Buffer;
  expiresAtMs: number | null;
  live: boolean;
  /** Wall-clock times of its changes of hands in the last hour (recentTransitions). */
  transitions: number[];
};

/** A run of leases of the whole list, assembled; null buf when one of them changed since. */
export type Chunk = {
  ids: string[];
  buf: Buffer | null;
  /** Where each live lease's remainingMs goes in buf: offset, width, expiry. */
  slots: { at: number; width: number; expiresAtMs: number }[];
};

/** Time left on a lease's countdown now, or null when it has none (not held, stale, no expiry). */
export const remainingOf = (entry: Entry, now: number) => (entry.live && entry.expiresAtMs !== null ? remainingMsAt(entry.expiresAtMs, now) : null);

export function entryOf(view: LeaseView, transitions: number[]): Entry {
  const live = hasCountdown(view.state, view.stale, view.expiresAt !== null);
  const json = JSON.stringify({ ...view, remainingMs: 0, recentTransitions: transitions.length });
  // The first ,"remainingMs":0, is the key itself: inside a JSON string every quote is
  // escaped, so a comma followed by a bare quote only ever starts a key.
  const at = json.indexOf(',"remainingMs":0,');
  return {
    view,
    head: Buffer.from(json.slice(0, at + ',"remainingMs":'.length)),
    tail: Buffer.from(json.slice(at + ',"remainingMs":0'.length)),
    expiresAtMs: view.expiresAt === null ? null : Date.parse(view.expiresAt),
    live,
    transitions,
  };
}

/** Assembles a chunk's bytes, with a blank slot for each live lease's remainingMs. */
export function assemble(entries: ReadonlyMap<string, Entry>, chunk: Chunk, now: number) {
  const parts: Buffer[] = [];
  const slots: Chunk['slots'] = [];
  let length = 0;
  const add = (part: Buffer) => {
    parts.push(part);
    length += part.length;
  };
  for (const [i, id] of chunk.ids.entries()) {
    const entry = entries.get(id)!;
    if (i > 0) add(COMMA);
    add(entry.head);
    if (entry.live && entry.expiresAtMs !== null) {
      // Wide enough for the time left now; it only shrinks (unless the clock steps back:
      // then the slot is too narrow and the chunk is assembled again, see leaseListJson).
      const width = Math.max(4, String(remainingMsAt(entry.expiresAtMs, now)).length);
      slots.push({ at: length, width, expiresAtMs: entry.expiresAtMs });
      add(Buffer.alloc(width, ' '));
    } else add(NULL);
    add(entry.tail);
  }
  chunk.buf = Buffer.concat(parts, length);
  chunk.slots = slots;
}

/** The whole list as UTF-8 JSON with remainingMs as of now; null when a slot is too narrow. */
export function wholeList(chunks: Chunk[], now: number): Buffer | null {
  let size = 2 + Math.max(0, chunks.length - 1);
  for (const chunk of chunks) size += chunk.buf!.length;
  const out = Buffer.allocUnsafe(size);
  out[0] = 0x5b; // [
  let at = 1;
  for (const [i, chunk] of chunks.entries()) {
    if (i > 0) out[at++] = 0x2c; // ,
    chunk.buf!.copy(out, at);
    for (const slot of chunk.slots) {
      const digits = String(remainingMsAt(slot.expiresAtMs, now));
      if (digits.length > slot.width) {
        chunk.buf = null;
        return null;
      }
      out.write(digits, at + slot.at, 'latin1');
    }
    at += chunk.buf!.length;
  }
  out[at] = 0x5d; // ]
  return out;
}

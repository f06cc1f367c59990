// What a collector tells the other processes on the store after a write, and how they hear it:
// a NOTIFY on "leasehold_changes" whose payload names the source and, up to 200 of each, the
// leases and events written (lib/live/relay.ts reads those from the store and publishes them).
// Anyone who can connect to the store can NOTIFY on the channel, so what is heard is checked
// with a schema, bounded, before anything is read for it.
import pg from 'pg';
import { z } from 'zod';
import type { WriteBatch, WrittenEvent } from './observer-batch';
import type { SqlSession } from './sql';
import type { Store } from './store';

export const CHANGE_CHANNEL = 'leasehold_changes';
/** Up to this many lease and event ids in a notice; more is "read the source's leases". */
export const MAX_NOTICE_IDS = 200;

export const changeNoticeSchema = z.object({
  collector: z.string().max(500),
  source: z.string().min(1).max(500),
  sourceRow: z.boolean().optional(),
  leases: z.array(z.string().max(20_000)).max(MAX_NOTICE_IDS).nullable(),
  events: z.array(z.string().regex(/^[1-9]\d{0,18}$/)).max(MAX_NOTICE_IDS).nullable(),
});

export type ChangeNotice = z.infer<typeof changeNoticeSchema>;

/** A batch's notice but for the events it wrote (which the store numbers), or null when the batch names no source. */
export function noticeWithoutEvents(batch: WriteBatch): Omit<ChangeNotice, 'events'> | null {
  const source = batch.source?.name ?? batch.dirty[0]?.source;
  if (!source) return null;
  return {
    collector: batch.collector.id,
    source,
    sourceRow: batch.sourceEvents.length > 0,
    leases: batch.dirty.length <= MAX_NOTICE_IDS ? batch.dirty.map((l) => l.id) : null,
  };
}

/** The notice of a written batch, or null when it changed nothing another process shows. */
export function changeNotice(batch: WriteBatch, written: readonly WrittenEvent[]): ChangeNotice | null {
  const notice = noticeWithoutEvents(batch);
  if (!notice || (written.length === 0 && batch.dirty.length === 0 && batch.sourceEvents.length === 0)) return null;
  return { ...notice, events: written.length <= MAX_NOTICE_IDS ? written.map((e) => e.id) : null };
}

/** Sends a notice in the writing transaction: other processes hear it when it commits. */
export async function notifyChange(sql: SqlSession, notice: ChangeNotice): Promise<void> {
  await sql.query(`SELECT pg_notify('${CHANGE_CHANNEL}', $1)`, [JSON.stringify(notice)]);
}

/** A payload heard on the channel as a notice, or null when it is not one Leasehold wrote. */
export function parseChangeNotice(payload: string | undefined): ChangeNotice | null {
  if (!payload) return null;
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return null;
  }
  const parsed = changeNoticeSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/**
 * Listens on one connection of the store (PostgreSQL only): each notice Leasehold wrote is
 * handed to `heard`, anything else on the channel is dropped. Resolves when the connection
 * ends after it was set up; throws when it cannot be set up. `onClient` is told the connection,
 * so that the caller can end it.
 */
export async function listenForChanges(store: Store, heard: (notice: ChangeNotice) => void, onClient: (client: pg.Client) => void): Promise<void> {
  if (store.url === null) throw new Error('the embedded store has no other processes to hear');
  const listener = new pg.Client({ connectionString: store.url, application_name: 'leasehold-relay', connectionTimeoutMillis: 5_000 });
  onClient(listener);
  const ended = new Promise<void>((resolve) => {
    listener.on('error', () => resolve());
    listener.on('end', () => resolve());
  });
  try {
    await listener.connect();
    listener.on('notification', (message) => {
      const notice = message.channel === CHANGE_CHANNEL ? parseChangeNotice(message.payload) : null;
      if (notice) heard(notice);
    });
    await listener.query(`LISTEN ${CHANGE_CHANNEL}`);
  } catch (error) {
    await listener.end().catch(() => {});
    throw error;
  }
  await ended;
  await listener.end().catch(() => {});
}

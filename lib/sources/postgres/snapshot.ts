// One snapshot of a PostgreSQL source, part by part: each configured table and the advisory
// locks are read alone, so a part that cannot be read is reported as unread (and among the
// problems) while the others are still seen; only when every part fails does the read fail.
import type { PgPoolClientLike } from '../../db/pg-like';
import type { Observation } from '../../domain/observe';
import { SourceUnavailableError } from '../errors';
import type { SourceSnapshot, UnreadScope } from '../types';
import { readAdvisory } from './advisory';
import { namelessProblem, readWatermark, rememberFullRead, type PostgresReadState } from './delta';
import { PartUnreadableError } from './part-errors';
import { readTable, type JudgedRows } from './tables';

export async function readSnapshot(state: PostgresReadState, client: PgPoolClientLike): Promise<SourceSnapshot> {
  const { config } = state;
  const startedMono = state.clock.mono();
  // Where this read starts, for the polls after it to read only what changed since (delta.ts).
  const watermark = await readWatermark(state, client);
  const tables = new Map<string, JudgedRows>();
  const observations: Observation[] = [];
  const unread: UnreadScope[] = [];
  const problems: string[] = [];
  // Each part alone: a table that cannot be read leaves the others (and the advisory
  // locks) readable; a failure of the connection itself fails the read.
  const part = async (prefix: string, read: () => Promise<Observation[]>) => {
    try {
      observations.push(...(await read()));
    } catch (error) {
      if (!(error instanceof PartUnreadableError)) throw error;
      unread.push({ prefix, reason: error.reason });
    }
  };
  for (const { table, format } of config.tables) {
    await part(`${table}/`, async () => {
      const judged = await readTable(state, client, table, format);
      tables.set(table, judged);
      if (judged.nameless > 0) problems.push(namelessProblem(table, judged.nameless));
      return judged.observations;
    });
  }
  let advisory: Observation[] = [];
  if (config.advisoryLocks) await part('advisory/', async () => (advisory = await readAdvisory(config.name, client)));
  const parts = config.tables.length + (config.advisoryLocks ? 1 : 0);
  if (parts > 0 && unread.length === parts) throw new SourceUnavailableError(config.name, unread.map((u) => u.reason).join('; '));
  const version = (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? null;
  problems.push(...unread.map((u) => u.reason));
  rememberFullRead(state, unread.length ? null : watermark, { tables, advisory }, version, startedMono);
  return { observations, status: { serverVersion: version, ...(problems.length ? { problems } : {}) }, ...(unread.length ? { unread } : {}) };
}

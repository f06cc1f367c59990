// The Silence table.
import { randomUUID } from 'node:crypto';
import { formatScope } from '../domain/alert-scope';
import type { AlertRuleType, AlertScope } from '../domain/alert-types';
import type { SilenceView } from '../domain/schemas/alerts';
import type { Store } from './store';
import { systemClock } from '../time/clock';

/** A silence as the API shows it: lib/domain/schemas/alerts.ts. */
export type { SilenceView };

type SilenceRecord = Awaited<ReturnType<Store['prisma']['silence']['findMany']>>[number];

function silenceView(row: SilenceRecord, now = systemClock.wall()): SilenceView {
  return {
    id: row.id,
    scope: row.scope,
    ruleType: row.ruleType,
    startsAt: row.startsAt.toISOString(),
    endsAt: row.endsAt.toISOString(),
    reason: row.reason,
    author: row.author,
    createdAt: row.createdAt.toISOString(),
    active: row.startsAt.getTime() <= now && now < row.endsAt.getTime(),
  };
}

export type NewSilence = { scope: AlertScope; ruleType: AlertRuleType | null; startsAt: Date; endsAt: Date; reason: string; author: string };

export async function createSilence(store: Store, input: NewSilence): Promise<SilenceView> {
  return silenceView(
    await store.prisma.silence.create({
      data: { id: randomUUID(), scope: formatScope(input.scope), ruleType: input.ruleType, startsAt: input.startsAt, endsAt: input.endsAt, reason: input.reason, author: input.author },
    }),
  );
}

/** Silences in force or to come, and those ended in the last day. */
export async function listSilences(store: Store): Promise<SilenceView[]> {
  const rows = await store.prisma.silence.findMany({ where: { endsAt: { gt: new Date(systemClock.wall() - 86_400_000) } }, orderBy: { endsAt: 'desc' }, take: 500 });
  return rows.map((row) => silenceView(row));
}

/** Ends a silence now (it stays in the list as ended); null when there is none by that id. */
export async function endSilence(store: Store, id: string): Promise<SilenceView | null> {
  const now = new Date(systemClock.wall());
  const { count } = await store.prisma.silence.updateMany({ where: { id, endsAt: { gt: now } }, data: { endsAt: now } });
  const row = await store.prisma.silence.findUnique({ where: { id } });
  if (!row) return null;
  void count;
  return silenceView(row);
}

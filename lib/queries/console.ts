// Read models for the console pages that exist before the full console does.
import 'server-only';
import type { Config } from '../config';
import { redactUrlPassword } from '../config';
import type { Store } from '../db';
import type { EventType, LeaseEventView } from '../domain/types';

export type SourceRow = {
  name: string;
  backend: string;
  /** Where it points, without credentials. */
  target: string;
  status: 'up' | 'down' | 'unknown';
  lastGoodReadAt: string | null;
  lastError: string | null;
  configured: boolean;
};

export async function listSources(store: Store, config: Config): Promise<SourceRow[]> {
  const rows = await store.prisma.source.findMany({ orderBy: { name: 'asc' } });
  const stored = new Map(rows.map((row) => [row.name, row]));
  const configured = config.sources.map((source): SourceRow => {
    const row = stored.get(source.name);
    const targets = source.backend === 'postgres' ? [source.url] : source.backend === 'redis' ? source.urls : source.endpoints;
    return {
      name: source.name,
      backend: source.backend,
      target: targets.map((target) => redactUrlPassword(target)).join(', '),
      status: row?.status ?? 'unknown',
      lastGoodReadAt: row?.lastGoodReadAt?.toISOString() ?? null,
      lastError: row?.lastError ?? null,
      configured: true,
    };
  });
  const names = new Set(config.sources.map((source) => source.name));
  const removed = rows
    .filter((row) => !names.has(row.name))
    .map((row): SourceRow => ({
      name: row.name,
      backend: row.backend,
      target: '',
      status: row.status,
      lastGoodReadAt: row.lastGoodReadAt?.toISOString() ?? null,
      lastError: row.lastError,
      configured: false,
    }));
  return [...configured, ...removed];
}

export type FailoverRow = Omit<LeaseEventView, 'id' | 'detail'>;

const FAILOVER_TYPES: EventType[] = ['taken_over', 'expired', 'released', 'force_expired', 'force_released'];

export async function listFailovers(store: Store, limit = 200): Promise<FailoverRow[]> {
  const events = await store.prisma.leaseEvent.findMany({
    where: { type: { in: FAILOVER_TYPES } },
    orderBy: { at: 'desc' },
    take: limit,
  });
  return events.map((event) => ({
    leaseId: event.leaseId,
    type: event.type as EventType,
    at: event.at.toISOString(),
    holder: event.holder,
    previousHolder: event.previousHolder,
    token: event.token?.toString() ?? null,
    previousToken: event.previousToken?.toString() ?? null,
    gapMs: event.gapMs,
  }));
}

export async function listFiringAlerts(store: Store) {
  const [rules, firing] = await Promise.all([
    store.prisma.alertRule.count(),
    store.prisma.alert.findMany({ where: { state: 'firing' }, orderBy: { startedAt: 'desc' }, take: 200 }),
  ]);
  return { rules, firing: firing.map((alert) => ({ id: alert.id, summary: alert.summary, startedAt: alert.startedAt.toISOString() })) };
}

export async function listAudit(store: Store, limit = 200) {
  const entries = await store.prisma.auditEntry.findMany({ orderBy: { id: 'desc' }, take: limit });
  return entries.map((entry) => ({
    id: entry.id.toString(),
    at: entry.at.toISOString(),
    actor: entry.actor,
    action: entry.action,
    phase: entry.phase,
    leaseId: entry.leaseId,
    reason: entry.reason,
  }));
}

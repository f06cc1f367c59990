// Read models for the console pages that exist before the full console does.
import 'server-only';
import type { Config, SourceConfig } from '../config';
import { redactUrl, scrub, secretsOf } from '../redact';
import { part, type Parts } from '../parts';
import type { Bus } from '../live/bus';
import type { Store } from '../db';
import type { SourceView } from '../domain/schemas/lease';
import { leaseCountsBySource } from '../db/leases';
import { lastDownAt, readSources, type SourceRecord } from '../db/sources';
import { backendOf, sourcePanel, sourceTitle } from '../sources/backends';
import { systemClock } from '../time/clock';

/** A source as the API shows it (docs/api.md "Source"): lib/domain/schemas/lease.ts. */
export type SourceRow = SourceView;

/** Where the source rows may be cached: a composition root's parts and its bus (which says when a source's status changes). */
export type SourceRowsCache = { root: Parts & { bus: Bus }; maxAgeMs: number };

type SourceRows = { byStore: WeakMap<Store, { at: number; rows: Promise<SourceRecord[]> }>; changed: boolean; unsubscribe: (() => void) | null };

/** The source rows a root last read, per store; unsubscribed from its bus when the root closes. */
const SOURCE_ROWS = part<SourceRows>('source rows', () => ({ byStore: new WeakMap(), changed: false, unsubscribe: null }), (cache) => cache.unsubscribe?.());

function readSourceRows(store: Store, cached?: SourceRowsCache): Promise<SourceRecord[]> {
  if (!cached) return readSources(store);
  const cache = cached.root.part(SOURCE_ROWS);
  // A source going down or coming back is read at once, whatever the cache's age.
  cache.unsubscribe ??= cached.root.bus.subscribe((message) => {
    if (message.type === 'source') cache.changed = true;
  }).unsubscribe;
  const last = cache.byStore.get(store);
  if (last && !cache.changed && systemClock.wall() - last.at <= cached.maxAgeMs) return last.rows;
  cache.changed = false;
  const rows = readSources(store);
  cache.byStore.set(store, { at: systemClock.wall(), rows });
  rows.catch(() => cache.byStore.delete(store));
  return rows;
}

/**
 * Where a source points, for people: its URLs (or etcd endpoints) joined by `, `, each taken
 * apart by lib/redact.ts with its password and secret query values replaced by `***`; user,
 * host, port and path stay. The etcd username and password fields are not part of it. Then,
 * in case a URL reads differently to a driver than to us, any secret of the source that the
 * text still holds is scrubbed, unless it is the host (a password that equals the host name
 * or a part of it is hidden by its place in the URL, and the host stays readable).
 */
export function sourceTarget(source: SourceConfig): string {
  const known = targets.get(source);
  if (known !== undefined) return known;
  const urls = backendOf(source).endpoints(source);
  const secrets = secretsOf({ ...source, username: undefined });
  const target = urls
    .map((url) => {
      const shown = redactUrl(url);
      const host = hostPart(shown);
      return scrub(shown, secrets.filter((secret) => !host.includes(secret)));
    })
    .join(', ');
  targets.set(source, target);
  return target;
}
const targets = new WeakMap<SourceConfig, string>();

/** The host (and port) list of a redacted URL: what follows its userinfo, up to the path. */
function hostPart(url: string): string {
  const afterScheme = url.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\//, '');
  const userinfoEnd = afterScheme.lastIndexOf('***@');
  return afterScheme.slice(userinfoEnd === -1 ? 0 : userinfoEnd + 4).split(/[/?#]/, 1)[0] ?? '';
}

/**
 * The configured sources with their status. `cached`: the source rows may be `maxAgeMs` old,
 * kept in that root (the lease list, asked for by every page load, reads them at most once a
 * second; a change of status is read at once); read from the store each time without it.
 */
export async function listSources(store: Store, config: Config, leaseCounts?: ReadonlyMap<string, number>, cached?: SourceRowsCache): Promise<SourceRow[]> {
  const [rows, leaseCount] = await Promise.all([
    readSourceRows(store, cached),
    leaseCounts ?? leaseCountsBySource(store),
  ]);
  const stored = new Map(rows.map((row) => [row.name, row]));
  const downSince = new Map(
    await Promise.all(
      rows
        .filter((row) => row.status === 'down')
        .map(async (row) => {
          return [row.name, (await lastDownAt(store, row.name))?.toISOString() ?? null] as const;
        }),
    ),
  );
  const configured = config.sources.map((source): SourceRow => {
    const row = stored.get(source.name);
    return {
      name: source.name,
      backend: source.backend,
      title: sourceTitle(source.backend, row?.detail ?? null),
      target: sourceTarget(source),
      status: row?.status ?? 'unknown',
      lastGoodReadAt: row?.lastGoodReadAt?.toISOString() ?? null,
      downSince: downSince.get(source.name) ?? null,
      lastError: row?.lastError ?? null,
      lastPollMs: row?.lastPollMs ?? null,
      pollMs: row?.pollMs ?? source.pollMs ?? config.pollMs,
      leases: leaseCount.get(source.name) ?? 0,
      collector: row?.collectorId ?? null,
      detail: (row?.detail as Record<string, unknown> | null) ?? null,
      panel: sourcePanel(source.backend, row?.detail ?? null),
      configured: true,
    };
  });
  const names = new Set(config.sources.map((source) => source.name));
  const removed = rows
    .filter((row) => !names.has(row.name))
    .map((row): SourceRow => ({
      name: row.name,
      backend: row.backend,
      title: sourceTitle(row.backend, row.detail),
      target: '',
      status: row.status,
      lastGoodReadAt: row.lastGoodReadAt?.toISOString() ?? null,
      downSince: downSince.get(row.name) ?? null,
      lastError: row.lastError,
      lastPollMs: row.lastPollMs,
      pollMs: row.pollMs,
      leases: leaseCount.get(row.name) ?? 0,
      collector: row.collectorId,
      detail: (row.detail as Record<string, unknown> | null) ?? null,
      panel: sourcePanel(row.backend, row.detail),
      configured: false,
    }));
  return [...configured, ...removed];
}

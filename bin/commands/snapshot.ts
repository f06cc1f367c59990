// `leasehold snapshot`: one read of every configured source, straight from the backends,
// with no server and no store. Exit 0 when every source could be read, 1 otherwise.
import { formatDuration } from '../../lib/domain/duration';
import type { Config } from '../../lib/config';
import { stateOf, leaseIdOf } from '../../lib/domain/observe';
import { scrub, secretsOf } from '../../lib/redact';
import { createSources } from '../../lib/sources/registry';
import { SourceUnavailableError } from '../../lib/sources/errors';
import { printTable } from './table';

const SNAPSHOT_TIMEOUT_MS = 15_000;

export async function snapshotCommand(config: Config, json: boolean): Promise<number> {
  if (config.sources.length === 0) {
    console.error(`leasehold: no sources are configured in ${config.file ?? 'leasehold.config.json (absent)'}`);
    return 1;
  }
  const sources = createSources(config);
  // The sources scrub their own errors (lib/sources/registry.ts); this is the last line of defence.
  const secrets = secretsOf(config);
  const observedAt = new Date().toISOString();
  const results = await Promise.all(
    sources.map(async (source) => {
      try {
        const snapshot = await source.snapshot(AbortSignal.timeout(SNAPSHOT_TIMEOUT_MS));
        return { source, snapshot, error: null as string | null };
      } catch (error) {
        const reason = error instanceof SourceUnavailableError ? error.reason : String((error as Error)?.message ?? error);
        return { source, snapshot: null, error: scrub(reason, secrets) };
      } finally {
        await source.close().catch(() => {});
      }
    }),
  );

  const leases = results.flatMap(({ source, snapshot }) =>
    // A gone lock's counter (Observation.gone) is not a lease of its own.
    (snapshot?.observations ?? []).filter((o) => !o.gone).map((o) => ({
      id: leaseIdOf(source.name, o.key),
      source: source.name,
      backend: source.backend,
      kind: o.kind,
      key: o.key,
      state: stateOf(o),
      holder: stateOf(o) === 'held' ? o.holder : null,
      token: o.token?.toString() ?? null,
      fenced: o.token !== null,
      ttlMs: o.ttlMs,
      remainingMs: stateOf(o) === 'held' ? o.remainingMs : null,
      observedAt,
      stale: false,
      candidates: o.candidates.map((c) => ({ holder: c.holder, token: c.token?.toString() ?? null })),
      problem: o.problem ?? null,
      detail: o.detail ?? null,
    })),
  );
  const sourceRows = results.map(({ source, snapshot, error }) => ({
    name: source.name,
    backend: source.backend,
    status: error ? 'down' : 'up',
    error,
    leases: snapshot?.observations.length ?? 0,
    detail: snapshot?.status ?? null,
  }));

  if (json) {
    process.stdout.write(`${JSON.stringify({ observedAt, sources: sourceRows, leases }, null, 2)}\n`);
  } else {
    printTable(
      ['SOURCE', 'BACKEND', 'STATUS', 'LEASES', 'DETAIL'],
      sourceRows.map((s) => [s.name, s.backend, s.status, String(s.leases), s.error ?? summary(s.detail)]),
    );
    console.log('');
    printTable(
      ['LEASE', 'KIND', 'STATE', 'HOLDER', 'TOKEN', 'REMAINING', 'QUEUED'],
      leases.map((l) => [
        l.id,
        l.kind,
        l.problem ? `unknown: ${l.problem}` : l.state,
        l.holder ?? '—',
        l.token ?? 'unfenced',
        l.remainingMs === null ? '—' : formatDuration(l.remainingMs),
        l.candidates.map((c) => c.holder).join(', ') || '—',
      ]),
    );
  }
  return sourceRows.every((s) => s.status === 'up') ? 0 : 1;
}

function summary(detail: Record<string, unknown> | null): string {
  if (!detail) return '';
  if ('raftTerm' in detail) return `leader ${String(detail.leader)}, raft term ${String(detail.raftTerm)}, index ${String(detail.raftIndex)}`;
  if ('mode' in detail) return `${String(detail.mode)}${detail.mode === 'redlock' ? `, quorum ${String(detail.quorum)}` : ''}`;
  if ('serverVersion' in detail) return `PostgreSQL ${String(detail.serverVersion)}`;
  return '';
}

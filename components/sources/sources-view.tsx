'use client';
// The sources page: every configured backend and whether Leasehold can read it. The live
// stream invalidates ['sources'] when a source's status changes; a refetch every 5 s keeps
// read times and poll durations current between changes (one small request).
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { fetchJson } from '@/components/live/api';
import { sourcesSchema } from '@/lib/domain/schemas';
import { useHydrated } from '@/components/live/hydrated';
import { EmptyState } from '@/components/ui/empty-state';
import { LoadError } from '@/components/ui/load-error';
import { When } from '@/components/when';
import { SourceCard } from './source-card';
import { SourcesSkeleton } from './skeleton';
import styles from './sources.module.css';

const REFRESH_EVERY_MS = 5_000;

export function SourcesView() {
  const query = useQuery({
    queryKey: ['sources'],
    queryFn: ({ signal }) => fetchJson('/api/v1/sources', sourcesSchema, signal),
    refetchInterval: REFRESH_EVERY_MS,
  });

  // Another part of the console may have this data before this page hydrates: the server's
  // skeleton is drawn until then (components/live/hydrated.ts).
  const hydrated = useHydrated();
  let body: ReactNode;
  if (query.isPending || !hydrated) {
    body = <SourcesSkeleton />;
  } else if (query.isError && !query.data) {
    body = <LoadError title="Sources could not be loaded" error={query.error} onRetry={() => void query.refetch()} retriesItself="The page tries again every few seconds" />;
  } else if (query.data.sources.length === 0) {
    body = (
      <EmptyState title="No sources are configured">
        <p>
          Leasehold reads the PostgreSQL, Redis and etcd sources listed in <code>leasehold.config.json</code> (or the file named by{' '}
          <code>LEASEHOLD_CONFIG</code>).
        </p>
        <p>
          Start from <code>leasehold.config.example.json</code>: copy it to <code>leasehold.config.json</code>, name your sources and their
          connections, then restart Leasehold.
        </p>
      </EmptyState>
    );
  } else {
    const sources = query.data.sources;
    const up = sources.filter((source) => source.status === 'up').length;
    const down = sources.filter((source) => source.status === 'down').length;
    const unknown = sources.length - up - down;
    body = (
      <>
        {query.isError ? (
          <p className={`warn-text ${styles.notice}`} role="alert">
            Could not refresh: {query.error.message} Showing what was read <When iso={new Date(query.dataUpdatedAt).toISOString()} />.
          </p>
        ) : null}
        <p className={styles.summary}>
          <strong className="tabular">{sources.length}</strong> {sources.length === 1 ? 'source' : 'sources'}
          {' · '}
          <span className="ok-text">{up} up</span>
          {' · '}
          <span className={down ? 'bad-text' : 'muted'}>{down} down</span>
          {unknown ? (
            <>
              {' · '}
              <span className="muted">{unknown} not read yet</span>
            </>
          ) : null}
        </p>
        <div className={styles.cards}>
          {sources.map((source) => (
            <SourceCard key={source.name} source={source} readAt={query.dataUpdatedAt} />
          ))}
        </div>
      </>
    );
  }

  return (
    <>
      <h1>Sources</h1>
      <p className="subtitle">The backends Leasehold reads, whether it can read them, and what they report about themselves.</p>
      {body}
    </>
  );
}

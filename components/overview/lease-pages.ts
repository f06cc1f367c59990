'use client';
// The overview of a list too large to keep whole in the browser (more than OVERVIEW_WHOLE_LIMIT leases, lib/domain/overview.ts):
// the server filters, sorts and pages it (GET /api/v1/leases?sort=&cursor=, docs/api.md
// "Paging"), the overview shows the pages it has read and reads the next one as the rows
// scroll near their end, and reads what it shows again every REFRESH_MS (the live stream then
// carries only the sources' messages: components/live/stream-scope.ts).
import { keepPreviousData, useInfiniteQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import type { OverviewFilter } from '@/lib/domain/overview';
import { leaseListSchema } from '@/lib/domain/schemas';
import { fetchJson } from '../live/api';
import { withLocalDeadline, type LeaseListResponse } from '../live/types';

const PAGE_LIMIT = 500;
const REFRESH_MS = 5_000;
const TYPING_MS = 150;

/** `value`, once it has stopped changing for `ms`. */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

export async function loadLeaseList(url: string, signal: AbortSignal): Promise<LeaseListResponse> {
  const body = await fetchJson(url, leaseListSchema, signal);
  const now = Date.now();
  return { ...body, leases: body.leases.map((lease) => withLocalDeadline(lease, now)) };
}

/** The URL of one page of the list as `filter` and `text` ask, after `cursor`. */
export function pageUrl(filter: Pick<OverviewFilter, 'source' | 'state' | 'sort'>, text: string, cursor: string | null): string {
  const query = new URLSearchParams({ sort: filter.sort, limit: String(PAGE_LIMIT) });
  if (filter.source) query.set('source', filter.source);
  if (filter.state !== 'all') query.set('state', filter.state);
  if (text.trim()) query.set('q', text.trim().slice(0, 200));
  if (cursor) query.set('cursor', cursor);
  return `/api/v1/leases?${query}`;
}

/** The pages read so far of the list `filter` and `text` ask for (enabled: the list is too large to keep whole). */
export function useLeasePages(filter: OverviewFilter, text: string, enabled: boolean) {
  const q = useSettled(text, TYPING_MS);
  return useInfiniteQuery({
    queryKey: ['lease-pages', filter.source, filter.state, filter.sort, q],
    enabled,
    initialPageParam: null as string | null,
    queryFn: ({ pageParam, signal }) => loadLeaseList(pageUrl(filter, q, pageParam), signal),
    getNextPageParam: (last) => last.next ?? undefined,
    // Every page held is read again, one after another: past four pages, less often, so that a
    // tab scrolled deep into 100,000 leases asks about one page a second, not two hundred each 5 s.
    refetchInterval: (query) => REFRESH_MS * Math.max(1, (query.state.data?.pages.length ?? 0) / 4),
    // A new filter shows the last rows until its own first page comes.
    placeholderData: keepPreviousData,
  });
}

'use client';
// The lease page's reads, under the query keys the live stream patches and invalidates
// (components/live/live-stream.tsx): ['lease', id], ['events', id, ...], ['renewals', id, ...].
import { keepPreviousData, useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { ApiError, fetchJson } from '@/components/live/api';
import { withLocalDeadline } from '@/components/live/types';
import { eventPageSchema, leaseDetailSchema, renewalsSchema, type EventPage, type RenewalRollup as RenewalRollupView, type Renewals } from '@/lib/domain/schemas';
import type { EventType, LeaseEventView } from '@/lib/domain/types';

export type { EventPage, RenewalSample } from '@/lib/domain/schemas';
export type RenewalRollupRow = RenewalRollupView;
export type RenewalsResponse = Renewals;

const base = (id: string) => `/api/v1/leases/${encodeURIComponent(id)}`;

/** A missing or malformed lease will not appear by asking again at once; anything else is tried once more. */
const retry = (count: number, error: Error) => count < 1 && !(error instanceof ApiError && (error.status === 400 || error.status === 404));

export function useLease(id: string) {
  return useQuery({
    queryKey: ['lease', id],
    queryFn: async ({ signal }) => withLocalDeadline(await fetchJson(base(id), leaseDetailSchema, signal)),
    retry,
  });
}

/** Events the charts and the timeline draw: at most this many, newest kept. */
export const RANGE_EVENT_LIMIT = 5_000;
const PAGE = 1_000;

export type RangeEvents = { events: LeaseEventView[]; truncated: boolean; fetchedAt: number };

/** Every event of the range, oldest first (up to RANGE_EVENT_LIMIT: then the newest, and `truncated`). */
export function useRangeEvents(id: string, range: string, enabled = true) {
  return useQuery({
    enabled,
    queryKey: ['events', id, 'range', range],
    queryFn: async ({ signal }): Promise<RangeEvents> => {
      const events: LeaseEventView[] = [];
      let cursor: string | null = null;
      do {
        const query = new URLSearchParams({ since: range, limit: String(PAGE) });
        if (cursor) query.set('cursor', cursor);
        const page: EventPage = await fetchJson(`${base(id)}/events?${query}`, eventPageSchema, signal);
        events.push(...page.events);
        cursor = page.next;
      } while (cursor && events.length < RANGE_EVENT_LIMIT);
      return { events: events.reverse(), truncated: cursor !== null, fetchedAt: Date.now() };
    },
    placeholderData: keepPreviousData,
    retry,
  });
}

export const TABLE_PAGE = 100;

/** The event table's pages, newest first, filtered by type on the server. */
export function useEventPages(id: string, range: string, types: EventType[]) {
  return useInfiniteQuery({
    queryKey: ['events', id, 'table', range, types.join(',')],
    queryFn: ({ signal, pageParam }) => {
      const query = new URLSearchParams({ since: range, limit: String(TABLE_PAGE) });
      if (types.length > 0) query.set('types', types.join(','));
      if (pageParam) query.set('cursor', pageParam);
      return fetchJson(`${base(id)}/events?${query}`, eventPageSchema, signal);
    },
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next,
    placeholderData: keepPreviousData,
    retry,
  });
}

export function useRenewals(id: string, range: string, follow = true, enabled = true) {
  return useQuery({
    enabled,
    queryKey: ['renewals', id, range],
    queryFn: ({ signal }) => fetchJson(`${base(id)}/renewals?since=${encodeURIComponent(range)}`, renewalsSchema, signal),
    placeholderData: keepPreviousData,
    retry,
    // Renewals are not events: the stream does not announce them. A held lease renews every
    // few seconds; its chart follows at this pace (and the tab in the background does not ask).
    refetchInterval: follow ? 15_000 : false,
  });
}

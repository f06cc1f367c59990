'use client';
// The embedded demo's status, read every two seconds while a page shows it (the digest
// figures are not on the live stream). A server without a demo answers 404: nothing shows.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { DemoStatus } from '@/lib/queries/demo';
import { fetchJson } from '../live/api';

export function useDemo() {
  return useQuery({
    queryKey: ['demo'],
    queryFn: async ({ signal }) => {
      const body = await fetchJson<({ running: true } & DemoStatus) | { running: false }>('/api/v1/demo', signal);
      return body.running ? body : null; // null: no demo on this server
    },
    refetchInterval: (query) => (query.state.data === null ? false : 2_000),
    staleTime: 0,
  });
}

export function useSetFaults() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (faults: boolean) => {
      const response = await fetch('/api/v1/demo', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ faults }) });
      if (!response.ok) throw new Error(((await response.json().catch(() => ({}))) as { message?: string }).message ?? `The server answered ${response.status}.`);
      return (await response.json()) as DemoStatus;
    },
    onSuccess: (status) => client.setQueryData(['demo'], status),
  });
}

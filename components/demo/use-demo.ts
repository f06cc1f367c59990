'use client';
// The embedded demo's status, read every two seconds while a page shows it (the digest
// figures are not on the live stream). A server without a demo answers 404: nothing shows.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { fetchJson, sendJson } from '../live/api';
import { demoSchema } from '@/lib/domain/schemas';

export function useDemo() {
  return useQuery({
    queryKey: ['demo'],
    queryFn: async ({ signal }) => {
      const body = await fetchJson('/api/v1/demo', demoSchema, signal);
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
      const status = await sendJson('/api/v1/demo', 'POST', { faults }, demoSchema);
      return status.running ? status : null;
    },
    onSuccess: (status) => client.setQueryData(['demo'], status),
  });
}

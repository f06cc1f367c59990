import type { Metadata } from 'next';
import { Suspense } from 'react';
import { LeaseDetailView } from '@/components/lease-detail/lease-detail';
import { LeaseSkeleton, MalformedLeaseId } from '@/components/lease-detail/states';
import { headers } from 'next/headers';
import { formatLeaseId, InvalidLeaseIdError, LEASE_PATH_HEADER, leaseIdFromRawPath, leaseIdFromSegments } from '@/lib/domain/lease-id';
import { NotAllowed } from '@/components/auth/not-allowed';
import { pageAccess } from '@/lib/auth/page';
import { can } from '@/lib/auth/permissions';
import { backendTitles } from '@/lib/sources/backends';

export const dynamic = 'force-dynamic';

type Props = { params: Promise<{ id: string[] }> };

/**
 * The lease id the URL names, in either form docs/api.md allows, from the raw path proxy.ts
 * passes on (decoded once, here); without it, from Next's params.
 */
async function idFrom(params: Props['params']): Promise<{ ok: true; id: string } | { ok: false; input: string; message: string }> {
  const raw = (await headers()).get(LEASE_PATH_HEADER);
  const segments = (await params).id;
  try {
    return { ok: true, id: formatLeaseId(raw ? leaseIdFromRawPath(raw) : leaseIdFromSegments(segments)) };
  } catch (error) {
    if (error instanceof InvalidLeaseIdError) return { ok: false, input: raw ? raw.replace(/^\/leases\//, '') : segments.join('/'), message: error.message };
    throw error;
  }
}

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const parsed = await idFrom(params);
  return { title: parsed.ok ? parsed.id : 'Not a lease id' };
}

export default async function LeasePage({ params }: Props) {
  const access = await pageAccess('PAGE /leases/[...id]');
  if (!access.allowed) return <NotAllowed message={access.message} />;
  const parsed = await idFrom(params);
  if (!parsed.ok) return <MalformedLeaseId input={parsed.input} message={parsed.message} />;
  // What the action panel offers; the API decides again on every request.
  const role = access.principal?.role ?? null;
  const abilities = { fenced: can(role, 'lease:force'), unfenced: can(role, 'lease:force-unfenced') };
  return (
    // The lease is read in the browser, where the live stream keeps it current.
    <Suspense fallback={<LeaseSkeleton id={parsed.id} />}>
      <LeaseDetailView key={parsed.id} id={parsed.id} abilities={abilities} backendTitles={backendTitles()} />
    </Suspense>
  );
}

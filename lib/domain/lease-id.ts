// Lease ids: "<source>/<key>". Keys may themselves contain slashes (etcd prefixes,
// "<table>/<row>"), so only the first slash separates the source from the key.

export type LeaseId = { source: string; key: string };

export class InvalidLeaseIdError extends Error {
  constructor(readonly input: string, reason: string) {
    super(`"${input.length > 120 ? `${input.slice(0, 117)}...` : input}" is not a lease id: ${reason}`);
    this.name = 'InvalidLeaseIdError';
  }
}

export function formatLeaseId(id: LeaseId): string {
  return `${id.source}/${id.key}`;
}

export function parseLeaseId(text: string): LeaseId {
  const slash = text.indexOf('/');
  if (slash <= 0) throw new InvalidLeaseIdError(text, 'expected "<source>/<key>"');
  const source = text.slice(0, slash);
  const key = text.slice(slash + 1);
  if (key === '') throw new InvalidLeaseIdError(text, 'the key after the source name is empty');
  return { source, key };
}

/**
 * The id from the segments of a catch-all route, in either form docs/api.md allows: one
 * percent-encoded segment ("pg%2Fleases%2Fjob") or plain segments ("pg/leases/job"). Next
 * hands the segments over already decoded (once): "%2F" inside one segment is a "/" by now,
 * and a "%" in a key arrives as itself, so nothing is decoded again here.
 */
export function leaseIdFromSegments(segments: readonly string[]): LeaseId {
  return parseLeaseId(segments.join('/'));
}

/** The path segment form used in links: the whole id percent-encoded as one segment. */
export function leaseIdPath(id: string): string {
  return encodeURIComponent(id);
}

/** The request header in which proxy.ts hands a lease page its raw (still encoded) path. */
export const LEASE_PATH_HEADER = 'x-leasehold-lease-path';

/**
 * The id named by a raw console path "/leases/<...>": every segment decoded exactly once, in
 * either form (one encoded segment, or plain segments). A malformed escape is not an id.
 */
export function leaseIdFromRawPath(rawPath: string): LeaseId {
  const rest = rawPath.replace(/^\/leases\//, '');
  const segments = rest.split('/').map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      throw new InvalidLeaseIdError(rest, 'it holds a malformed percent-escape');
    }
  });
  return leaseIdFromSegments(segments);
}

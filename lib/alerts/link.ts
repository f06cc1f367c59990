// Where a message links to: the console's page for the alert's lease, or its source.
import type { AlertView } from '../domain/alert-types';
import { leaseIdPath } from '../domain/lease-id';

/** `publicUrl`: the console as people reach it; without it, a path relative to the console. */
export function alertLinker(publicUrl: string | undefined): (view: AlertView) => string | null {
  const base = publicUrl ? publicUrl.replace(/\/+$/, '') : '';
  return (view) => {
    if (view.leaseId) {
      try {
        return `${base}/leases/${leaseIdPath(view.leaseId)}`;
      } catch {
        return `${base}/alerts`;
      }
    }
    return `${base}/sources`;
  };
}

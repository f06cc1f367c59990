// A quarantine (docs/admin-actions.md, Consul's lock-delay done safely): after a forced action
// the lease is held for a while by this reserved holder, so that nobody re-acquires it before
// the old holder's renew deadline has passed. Every page shows such a lease as quarantined.
export const QUARANTINE_HOLDER = 'leasehold:quarantine';

export function isQuarantined(lease: { state: string; holder: string | null }): boolean {
  return lease.state === 'held' && lease.holder === QUARANTINE_HOLDER;
}

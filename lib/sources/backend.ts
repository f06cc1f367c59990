// What a backend kind is to Leasehold, in one place per kind: lib/sources/<kind>/backend.ts
// exports one BackendDescriptor, and lib/sources/backends.ts lists them. The registry (reads),
// the force registry (guarded actions) and the sources' targets (lib/queries/console.ts) are
// driven by the list, and so are the config file's sources (lib/config), the titles and facts
// of the sources page and the lease page; none of them names a kind.
import type { z } from 'zod';
import type { PgPoolLike } from '../db/pg-like';
import type { LeaseClientOptions } from '../lease';
import type { CanaryEntry } from './config-parts';
import type { Logger } from '../log';
import type { Clock } from '../time/clock';
import type { CheckedRequest, ForceDone, ForcePlan } from './force';
import type { LeaseSource } from './types';
import type { SourcePanel } from '../domain/schemas/source-panel';

/**
 * What a backend is handed besides its config. `embedded`: the embedded store's database, for
 * a source that names it (only PostgreSQL can); null or absent where this process has none open.
 * `clock`: what its reads' times are read on (default: the system clock); `log`: a child logger
 * for it, for a backend that logs.
 */
export type BackendContext = { defaultPollMs: number; embedded?: PgPoolLike | null; clock?: Clock; log?: Logger };

/** A backend's half of the guarded actions: one compare-and-set per action (lib/sources/force.ts). */
export type BackendForce = {
  plan(request: CheckedRequest, signal: AbortSignal): Promise<ForcePlan>;
  execute(request: CheckedRequest, signal: AbortSignal): Promise<ForceDone>;
  close(): Promise<void>;
};

/** What every source entry of the config holds, whatever its kind (lib/sources/config-parts.ts sourceEntry). */
export type SourceEntry = { name: string; backend: string; pollMs?: number; canary?: CanaryEntry };

/**
 * Where a source's canary lease is held (lib/collector/canary.ts): lib/lease's client for the
 * source's backend, in its Leasehold layout, and the key the source's own reads name the canary
 * by (the collector leaves it out of them); or why this source cannot hold one.
 */
export type CanaryTarget = { client: LeaseClientOptions; observedKey: string } | { problem: string };

/** A backend's config entry: a strict object whose `backend` is the kind's literal (sourceEntry). */
export type SourceEntrySchema<C extends SourceEntry> = z.ZodType<C> & z.core.$ZodTypeDiscriminable;

export type BackendDescriptor<C extends SourceEntry = SourceEntry> = {
  /** The config's `backend` value. */
  kind: C['backend'];
  /** How a person names it: "PostgreSQL", "Redis", "etcd". */
  title: string;
  /**
   * Its entry in the config file's `sources`. Secrets in it are redacted by name (lib/redact.ts:
   * URL passwords, fields named like password/secret/token, and a source's `username`).
   */
  configSchema: SourceEntrySchema<C>;
  /** A problem with an entry that only the whole config can see (e.g. naming the embedded store beside DATABASE_URL), or null. */
  checkInConfig?(config: C, store: { embedded: boolean }): { field: string; problem: string } | null;
  /** Its reads: full and targeted, with their change hints, deadlines and expiry hints. */
  createSource(config: C, context: BackendContext): LeaseSource;
  /** Its guarded actions; throws ForceNotPossibleError when the source cannot be acted on here. */
  createForce(config: C, context: Omit<BackendContext, 'defaultPollMs'>): BackendForce;
  /** Its canary lease's client and key (config.canary is set); absent: the kind has no canary. */
  canary?(config: C, canary: CanaryEntry, context: Pick<BackendContext, 'embedded'>): CanaryTarget;
  /** The addresses it reads, as configured (redacted by the caller before anyone sees them). */
  endpoints(config: C): readonly string[];
  /** How the sources page names one source of this kind, from what it last reported of itself (Redlock: over how many instances). */
  describe?(detail: unknown): string;
  /**
   * What the sources page shows of the backend's own status, from what the source last
   * reported (its `detail`, read defensively): null when it cannot read it. Without one, the
   * status's plain values are shown as facts (lib/sources/status-panel.ts).
   */
  panel?(detail: unknown): SourcePanel | null;
};

/** A descriptor, typed for its own config (the list keeps them typed: lib/sources/backends.ts). */
export const describeBackend = <C extends SourceEntry>(descriptor: BackendDescriptor<C>): BackendDescriptor<C> => descriptor;

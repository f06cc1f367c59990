// What a backend kind is to Leasehold, in one place per kind: lib/sources/<kind>/backend.ts
// exports one BackendDescriptor, and lib/sources/backends.ts lists them. The registry (reads),
// the force registry (guarded actions) and the sources' targets (lib/queries/console.ts) are
// driven by the list; none of them names a kind.
import type { SourceConfig } from '../config';
import type { PgPoolLike } from '../db/pg-like';
import type { CheckedRequest, ForceDone, ForcePlan } from './force';
import type { LeaseSource } from './types';

/**
 * What a backend is handed besides its config. `embedded`: the embedded store's database, for
 * a source that names it (only PostgreSQL can); null or absent where this process has none open.
 */
export type BackendContext = { defaultPollMs: number; embedded?: PgPoolLike | null };

/** A backend's half of the guarded actions: one compare-and-set per action (lib/sources/force.ts). */
export type BackendForce = {
  plan(request: CheckedRequest, signal: AbortSignal): Promise<ForcePlan>;
  execute(request: CheckedRequest, signal: AbortSignal): Promise<ForceDone>;
  close(): Promise<void>;
};

export type BackendDescriptor<C extends SourceConfig = SourceConfig> = {
  /** The config's `backend` value. */
  kind: C['backend'];
  /** How a person names it: "PostgreSQL", "Redis", "etcd". */
  title: string;
  /** Its reads: full and targeted, with their change hints, deadlines and expiry hints. */
  createSource(config: C, context: BackendContext): LeaseSource;
  /** Its guarded actions; throws ForceNotPossibleError when the source cannot be acted on here. */
  createForce(config: C, context: Omit<BackendContext, 'defaultPollMs'>): BackendForce;
  /** The addresses it reads, as configured (redacted by the caller before anyone sees them). */
  endpoints(config: C): readonly string[];
};

/** A descriptor, typed for its own config and stored in the list for any. */
export const describeBackend = <C extends SourceConfig>(descriptor: BackendDescriptor<C>) => descriptor as unknown as BackendDescriptor;

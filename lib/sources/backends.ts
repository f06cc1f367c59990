// The registration list: every backend kind Leasehold reads, one descriptor each
// (lib/sources/<kind>/backend.ts). A new kind is its folder and one line here: the config
// file's sources, the registry, the force registry, redaction and the pages follow from it.
import { z } from 'zod';
import type { BackendDescriptor, SourceEntry, SourceEntrySchema } from './backend';
import { etcdBackend } from './etcd/backend';
import { postgresBackend } from './postgres/backend';
import { redisBackend } from './redis/backend';
import { zookeeperBackend } from './zookeeper/backend';
import { plainFactsPanel } from './status-panel';
import type { SourcePanel } from '../domain/schemas/source-panel';
import type { PgPoolLike } from '../db/pg-like';

const REGISTERED = [postgresBackend, redisBackend, etcdBackend, zookeeperBackend] as const;

/** The config schemas of the registered kinds, as a tuple (what z.discriminatedUnion takes). */
type ConfigSchemas<T extends readonly unknown[]> = { -readonly [K in keyof T]: T[K] extends BackendDescriptor<infer C> ? SourceEntrySchema<C> : never };

/** A source entry of the config file, of any registered kind. */
export type SourceConfig = (typeof REGISTERED)[number] extends infer D ? (D extends BackendDescriptor<infer C> ? C : never) : never;

export const BACKEND_DESCRIPTORS: readonly BackendDescriptor[] = REGISTERED;

/** The config file's `sources[]` entry: one of the registered kinds' entries, told apart by `backend`. */
export const sourceSchema = z.discriminatedUnion(
  'backend',
  REGISTERED.map((descriptor) => descriptor.configSchema) as unknown as ConfigSchemas<typeof REGISTERED>,
);

/** The descriptor of a source's kind, from `list` (the registered ones unless a test hands its own). */
export function backendOf(config: Pick<SourceEntry, 'backend' | 'name'>, list: readonly BackendDescriptor[] = BACKEND_DESCRIPTORS): BackendDescriptor {
  const descriptor = list.find((d) => d.kind === config.backend);
  if (!descriptor) throw new Error(`source ${config.name}: no backend of kind ${JSON.stringify(config.backend).slice(0, 60)} is registered`);
  return descriptor;
}

/** How a person names each registered kind ("PostgreSQL" for postgres), for the pages. */
export function backendTitles(list: readonly BackendDescriptor[] = BACKEND_DESCRIPTORS): Record<string, string> {
  return Object.fromEntries(list.map((descriptor) => [descriptor.kind, descriptor.title]));
}

/** How the sources page names one source: its kind's title, said more precisely from what it reported where the kind can (Redlock). */
export function sourceTitle(backend: string, detail: unknown, list: readonly BackendDescriptor[] = BACKEND_DESCRIPTORS): string {
  const descriptor = list.find((d) => d.kind === backend);
  if (!descriptor) return backend;
  return descriptor.describe?.(detail) ?? descriptor.title;
}

/** What the sources page shows of one source's backend status: its kind's panel, or its plain values where the kind has none or cannot read it (lib/sources/status-panel.ts). */
export function sourcePanel(backend: string, detail: unknown, list: readonly BackendDescriptor[] = BACKEND_DESCRIPTORS): SourcePanel | null {
  if (detail === null || detail === undefined) return null;
  return list.find((d) => d.kind === backend)?.panel?.(detail) ?? plainFactsPanel(detail);
}

/** A pool that is never asked anything: where a canary's target is only judged, not opened. */
const JUDGED_ONLY: PgPoolLike = { query: () => Promise.reject(new Error('not opened')), connect: () => Promise.reject(new Error('not opened')), end: async () => {}, on: () => undefined };

/** Why a source's canary cannot be held (null: it can, or it has none), as the config is read. */
export function canaryProblem(config: SourceEntry, list: readonly BackendDescriptor[] = BACKEND_DESCRIPTORS): string | null {
  if (!config.canary) return null;
  const descriptor = backendOf(config, list);
  if (!descriptor.canary) return `expected no canary: ${descriptor.title} sources cannot hold one`;
  const target = descriptor.canary(config, config.canary, { embedded: JUDGED_ONLY });
  return 'problem' in target ? target.problem : null;
}

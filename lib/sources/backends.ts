// The registration list: every backend kind Leasehold reads, one descriptor each
// (lib/sources/<kind>/backend.ts). A new kind is its folder and one line here.
import type { SourceConfig } from '../config';
import type { BackendDescriptor } from './backend';
import { etcdBackend } from './etcd/backend';
import { postgresBackend } from './postgres/backend';
import { redisBackend } from './redis/backend';

export const BACKEND_DESCRIPTORS: readonly BackendDescriptor[] = [postgresBackend, redisBackend, etcdBackend];

/** The descriptor of a source's kind, from `list` (the registered ones unless a test hands its own). */
export function backendOf(config: Pick<SourceConfig, 'backend' | 'name'>, list: readonly BackendDescriptor[] = BACKEND_DESCRIPTORS): BackendDescriptor {
  const descriptor = list.find((d) => d.kind === config.backend);
  if (!descriptor) throw new Error(`source ${config.name}: no backend of kind ${JSON.stringify(config.backend).slice(0, 60)} is registered`);
  return descriptor;
}

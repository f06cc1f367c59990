// etcd as a backend kind (lib/sources/backend.ts): leases, elections and locks, with etcd's own
// Raft status, read by this folder's adapter and acted on by its force.ts.
import { exactOf } from '../exact';
import { describeBackend } from '../backend';
import { createEtcdForce } from './force';
import { createEtcdSource } from './index';
import { etcdSource, type EtcdSourceConfig } from './config';
import { etcdPanel } from './panel';
import { ETCD_MIN_TTL_MS } from '../../lease/etcd';

export const etcdBackend = describeBackend<EtcdSourceConfig>({
  kind: 'etcd',
  title: 'etcd',
  configSchema: etcdSource,
  createSource: (config, context) => createEtcdSource(config, context.defaultPollMs, context),
  createForce: (config) => createEtcdForce(config),
  endpoints: (config) => config.endpoints,
  // A key with an etcd lease of its own, as lib/lease writes a single lease.
  canary: (config, canary) =>
    canary.ttlMs < ETCD_MIN_TTL_MS
      ? { problem: `expected a canary ttlMs of at least ${ETCD_MIN_TTL_MS} ms on etcd (it keeps no shorter lease), found ${canary.ttlMs}` }
      : { client: { backend: 'etcd', endpoints: config.endpoints, username: config.username, password: config.password }, observedKey: exactOf(canary.key) },
  panel: etcdPanel,
});

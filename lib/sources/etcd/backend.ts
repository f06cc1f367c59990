// etcd as a backend kind (lib/sources/backend.ts): leases, elections and locks, with etcd's own
// Raft status, read by this folder's adapter and acted on by its force.ts.
import { describeBackend } from '../backend';
import { createEtcdForce } from './force';
import { createEtcdSource } from './index';
import { etcdSource, type EtcdSourceConfig } from './config';
import { etcdPanel } from './panel';

export const etcdBackend = describeBackend<EtcdSourceConfig>({
  kind: 'etcd',
  title: 'etcd',
  configSchema: etcdSource,
  createSource: (config, context) => createEtcdSource(config, context.defaultPollMs, context),
  createForce: (config) => createEtcdForce(config),
  endpoints: (config) => config.endpoints,
  panel: etcdPanel,
});

// etcd as a backend kind (lib/sources/backend.ts): leases, elections and locks, with etcd's own
// Raft status, read by this folder's adapter and acted on by its force.ts.
import type { EtcdSourceConfig } from '../../config';
import { describeBackend } from '../backend';
import { createEtcdForce } from './force';
import { createEtcdSource } from './index';

export const etcdBackend = describeBackend<EtcdSourceConfig>({
  kind: 'etcd',
  title: 'etcd',
  createSource: (config, { defaultPollMs }) => createEtcdSource(config, defaultPollMs),
  createForce: (config) => createEtcdForce(config),
  endpoints: (config) => config.endpoints,
});

// ZooKeeper as a backend kind (lib/sources/backend.ts): Apache Curator's locks and leader
// latches under configured znode paths, with the servers' own status, read by this folder's
// adapter and acted on by its force.ts.
import { describeBackend } from '../backend';
import { zookeeperSource, serversOf, type ZookeeperSourceConfig } from './config';
import { createZookeeperForce } from './force';
import { createZookeeperSource } from './index';
import { zookeeperPanel } from './panel';

export const zookeeperBackend = describeBackend<ZookeeperSourceConfig>({
  kind: 'zookeeper',
  title: 'ZooKeeper',
  configSchema: zookeeperSource,
  createSource: (config, context) => createZookeeperSource(config, context.defaultPollMs, context),
  createForce: (config) => createZookeeperForce(config),
  endpoints: (config) => serversOf(config),
  panel: zookeeperPanel,
});

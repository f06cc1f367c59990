// Redis as a backend kind (lib/sources/backend.ts): SET NX PX locks, fence counters and
// Redlock quorums, read by this folder's adapter and acted on by its force.ts.
import type { RedisSourceConfig } from '../../config';
import { describeBackend } from '../backend';
import { createRedisForce } from './force';
import { createRedisSource } from './index';

export const redisBackend = describeBackend<RedisSourceConfig>({
  kind: 'redis',
  title: 'Redis',
  createSource: (config, { defaultPollMs }) => createRedisSource(config, defaultPollMs),
  createForce: (config) => createRedisForce(config),
  endpoints: (config) => config.urls,
});

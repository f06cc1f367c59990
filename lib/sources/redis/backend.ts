// Redis as a backend kind (lib/sources/backend.ts): SET NX PX locks, fence counters and
// Redlock quorums, read by this folder's adapter and acted on by its force.ts.
import { exactOf } from '../exact';
import { describeBackend } from '../backend';
import { createRedisForce } from './force';
import { createRedisSource } from './index';
import { redisSource, type RedisSourceConfig } from './config';
import { redisPanel } from './panel';

export const redisBackend = describeBackend<RedisSourceConfig>({
  kind: 'redis',
  title: 'Redis',
  configSchema: redisSource,
  createSource: (config, context) => createRedisSource(config, context.defaultPollMs, context),
  createForce: (config) => createRedisForce(config),
  endpoints: (config) => config.urls,
  // The lock key itself (SET NX PX) and its fence counter beside it, as lib/lease writes them.
  canary: (config, canary) => ({ client: { backend: 'redis', urls: config.urls, fenceSuffix: config.fenceSuffix }, observedKey: exactOf(canary.key) }),
  panel: redisPanel,
  describe(detail) {
    // The status the source reported (observe.ts): { mode, instances: [...] }, read defensively.
    const reported = detail as { mode?: unknown; instances?: unknown } | null;
    return reported?.mode === 'redlock' && Array.isArray(reported.instances) ? `Redis, Redlock over ${reported.instances.length} instances` : 'Redis';
  },
});

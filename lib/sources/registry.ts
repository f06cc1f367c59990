// Builds the configured sources. The only place that knows every backend's adapter.
import { DEMO_SOURCE, type Config, type SourceConfig } from '../config';
import type { PgPoolLike } from '../db/pg-like';
import { createEtcdSource } from './etcd';
import { createPostgresSource } from './postgres';
import { createRedisSource } from './redis';
import type { LeaseSource } from './types';

export function createSource(config: SourceConfig, defaultPollMs: number): LeaseSource {
  switch (config.backend) {
    case 'postgres':
      return createPostgresSource(config, defaultPollMs);
    case 'redis':
      return createRedisSource(config, defaultPollMs);
    case 'etcd':
      return createEtcdSource(config, defaultPollMs);
  }
}

/**
 * `embedded`: the embedded store's database, where the demo's source reads its lease table
 * (config.demo: the demo fleet runs in this process; lib/demo).
 */
export function createSources(config: Pick<Config, 'sources' | 'pollMs'> & { demo?: boolean }, embedded?: PgPoolLike | null): LeaseSource[] {
  return config.sources.map((source) =>
    config.demo && source.name === DEMO_SOURCE.name && source.backend === 'postgres'
      ? createPostgresSource(source, config.pollMs, embedded ?? undefined)
      : createSource(source, config.pollMs),
  );
}

// Builds the configured sources. The only place that knows every backend's adapter.
import type { Config, SourceConfig } from '../config';
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

export function createSources(config: Pick<Config, 'sources' | 'pollMs'>): LeaseSource[] {
  return config.sources.map((source) => createSource(source, config.pollMs));
}

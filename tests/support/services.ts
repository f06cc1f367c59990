// Where the test servers are: written by `scripts/services.sh up` (which `npm test` runs
// first) to .leasehold/services/env; variables already in the environment win.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export type TestServices = {
  databaseUrl: string;
  redisUrl: string;
  etcdEndpoints: string[];
  etcdClusterEndpoints: string[];
  chromium: string | undefined;
  alertmanagerUrl: string | undefined;
  /** The standalone ZooKeeper's connect string (host:port). */
  zookeeper: string;
};

export function testServices(): TestServices {
  const file = path.join(process.env.LEASEHOLD_SERVICES_DIR ?? path.join(ROOT, '.leasehold', 'services'), 'env');
  const fromFile: Record<string, string> = {};
  if (existsSync(file)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const eq = line.indexOf('=');
      if (eq > 0) fromFile[line.slice(0, eq)] = line.slice(eq + 1);
    }
  }
  const get = (name: string) => process.env[name] ?? fromFile[name];
  const databaseUrl = get('LEASEHOLD_TEST_DATABASE_URL');
  if (!databaseUrl) {
    throw new Error('The test services are not up: run `bash scripts/services.sh up` first (`npm test` does it for you).');
  }
  const list = (value: string | undefined) => (value ? value.split(',').filter(Boolean) : []);
  return {
    databaseUrl,
    redisUrl: get('LEASEHOLD_TEST_REDIS_URL') ?? 'redis://127.0.0.1:16379',
    etcdEndpoints: list(get('LEASEHOLD_TEST_ETCD_ENDPOINTS')),
    etcdClusterEndpoints: list(get('LEASEHOLD_TEST_ETCD_CLUSTER_ENDPOINTS')),
    chromium: get('LEASEHOLD_CHROMIUM'),
    alertmanagerUrl: get('LEASEHOLD_TEST_ALERTMANAGER_URL'),
    zookeeper: get('LEASEHOLD_TEST_ZOOKEEPER') ?? '127.0.0.1:12181',
  };
}

// The backends every lease contract test runs against, on the real test servers:
// PostgreSQL, a single Redis, a Redlock quorum of three Redis instances, and etcd.
import { randomBytes } from 'node:crypto';
import type { LeaseClientOptions } from '../../lib/lease';
import { createPostgresDatabase, type TestDatabase } from './databases';
import { startRedisServer, type RedisServer } from './redis-servers';
import { testServices } from './services';

export type Address = { host: string; port: number };

export type BackendUnderTest = {
  name: 'postgres' | 'redis' | 'redis-redlock' | 'etcd';
  /** A TTL short enough for tests and long enough for the backend (etcd: 2 s at least). */
  ttlMs: number;
  /** How long after a TTL the backend may still report the lease held (etcd checks expiry every 500 ms). */
  expiryGraceMs: number;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  /** The server addresses the client connects to (a proxy can stand in front of each). */
  targets(): Address[];
  /** Client options pointing at `addresses` (default: the targets themselves). */
  options(addresses?: Address[], callTimeoutMs?: number): LeaseClientOptions;
  /** A fresh key no other test uses. */
  key(label: string): string;
};

const unique = () => randomBytes(4).toString('hex');
const addressOf = (url: string): Address => {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port) };
};
const withAddress = (url: string, address: Address) => {
  const parsed = new URL(url);
  parsed.hostname = address.host;
  parsed.port = String(address.port);
  return parsed.toString();
};

function postgres(): BackendUnderTest {
  let db: (TestDatabase & { url: string }) | undefined;
  const table = `leases_${unique()}`;
  return {
    name: 'postgres',
    ttlMs: 700,
    expiryGraceMs: 100,
    async setup() {
      db = await createPostgresDatabase('lh_lease');
    },
    async teardown() {
      await db?.drop();
    },
    targets: () => [addressOf(db!.url)],
    options: (addresses, callTimeoutMs) => ({
      backend: 'postgres',
      url: addresses ? withAddress(db!.url, addresses[0]!) : db!.url,
      table,
      callTimeoutMs,
    }),
    key: (label) => `${label}-${unique()}`,
  };
}

function redis(): BackendUnderTest {
  const url = testServices().redisUrl;
  return {
    name: 'redis',
    ttlMs: 700,
    expiryGraceMs: 100,
    setup: async () => {},
    teardown: async () => {},
    targets: () => [addressOf(url)],
    options: (addresses, callTimeoutMs) => ({
      backend: 'redis',
      urls: [addresses ? withAddress(url, addresses[0]!) : url],
      callTimeoutMs,
    }),
    key: (label) => `test:lease:${label}:${unique()}`,
  };
}

/** Three independent instances on their own ports, started for the test run. */
export const REDLOCK_PORTS = [16391, 16392, 16393];

function redisRedlock(): BackendUnderTest {
  let servers: RedisServer[] = [];
  return {
    name: 'redis-redlock',
    ttlMs: 700,
    expiryGraceMs: 100,
    async setup() {
      servers = await Promise.all(REDLOCK_PORTS.map((port) => startRedisServer(port)));
    },
    async teardown() {
      await Promise.all(servers.map((server) => server.stop()));
    },
    targets: () => servers.map((server) => addressOf(server.url)),
    options: (addresses, callTimeoutMs) => ({
      backend: 'redis',
      urls: (addresses ?? servers.map((server) => addressOf(server.url))).map((a) => `redis://${a.host}:${a.port}`),
      callTimeoutMs,
    }),
    key: (label) => `test:redlock:${label}:${unique()}`,
  };
}

function etcd(): BackendUnderTest {
  const endpoint = testServices().etcdEndpoints[0]!;
  return {
    name: 'etcd',
    ttlMs: 2_000,
    expiryGraceMs: 1_500,
    setup: async () => {},
    teardown: async () => {},
    targets: () => [addressOf(endpoint)],
    options: (addresses, callTimeoutMs) => ({
      backend: 'etcd',
      endpoints: [addresses ? `http://${addresses[0]!.host}:${addresses[0]!.port}` : endpoint],
      callTimeoutMs,
    }),
    key: (label) => `test/lease/${label}/${unique()}`,
  };
}

export function backendsUnderTest(): BackendUnderTest[] {
  return [postgres(), redis(), redisRedlock(), etcd()];
}

// Values read from backends are untrusted: binary, huge, of another type, with control
// characters, or tables of another shape. Each is shown safely or reported by name; no read
// fails because of one bad key, and nothing crashes.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { Etcd3 } from 'etcd3';
import Redis from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SourceUnavailableError } from '../../lib/sources/errors';
import { createSource } from '../../lib/sources/registry';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { startSilentListener, type SilentListener } from '../support/silent-listener';
import { testServices } from '../support/services';

const services = testServices();
const unique = () => randomBytes(3).toString('hex');

describe('redis: untrusted keys and values', () => {
  const redis = new Redis(services.redisUrl);
  const prefix = `bad${unique()}:`;
  const source = createSource({ name: 'r', backend: 'redis', urls: [services.redisUrl], match: [`${prefix}*`], fenceSuffix: ':fence', keyspaceNotifications: 'off' }, 1_000);
  afterAll(async () => {
    await source.close();
    redis.disconnect();
  });

  it('shows binary, huge and control-character values escaped and cut, reports other types, and keeps reading', async () => {
    await redis.set(`${prefix}binary`, Buffer.from([0xff, 0x00, 0x41, 0x1b]), 'PX', 60_000);
    await redis.set(`${prefix}huge`, 'x'.repeat(1_000_000), 'PX', 60_000);
    await redis.set(Buffer.concat([Buffer.from(prefix), Buffer.from('ctl\n\u0007key')]), 'holder\r\n', 'PX', 60_000);
    await redis.hset(`${prefix}hash`, 'a', '1');
    await redis.set(`${prefix}fenced`, 'w1', 'PX', 60_000);
    await redis.set(`${prefix}fenced:fence`, 'not-a-number');
    await redis.set(`${prefix}ok`, 'worker-1', 'PX', 60_000);
    const { observations } = await source.snapshot(AbortSignal.timeout(10_000));
    const byKey = new Map(observations.map((o) => [o.key, o]));
    expect(byKey.get(`${prefix}binary`)?.holder).toBe('\\xff\\x00A\\x1b');
    // A long value is its first bytes and its digest: sent so by Redis, never whole.
    expect(byKey.get(`${prefix}huge`)!.holder).toMatch(/^x{120}…\[1000000 bytes, sha1:[0-9a-f]{32}\]$/);
    expect(byKey.get(`${prefix}ctl\\x0a\\x07key`)?.holder).toBe('holder\\x0d\\x0a');
    expect(byKey.get(`${prefix}hash`)?.problem).toBe('the key holds a hash, not a string: it is not a lock this source can read');
    expect(byKey.get(`${prefix}fenced`)).toMatchObject({ holder: 'w1', token: null, detail: { fence: 'the fence counter holds "not-a-number", not a number' } });
    expect(byKey.get(`${prefix}ok`)).toMatchObject({ holder: 'worker-1' });
    // A fence counter is not a lease of its own.
    expect(byKey.has(`${prefix}fenced:fence`)).toBe(false);
  });

  it('a Redis that refuses connections is unavailable, said in words that name it', async () => {
    // Port 16388: nothing listens there (below the test Redis ports, never started).
    const down = createSource({ name: 'gone', backend: 'redis', urls: ['redis://:secret@127.0.0.1:16388'], match: ['x:*'], fenceSuffix: ':fence', keyspaceNotifications: 'off' }, 1_000);
    try {
      await new Promise((resolve) => setTimeout(resolve, 300)); // let the first connection attempt fail
      const error = await down.snapshot(AbortSignal.timeout(10_000)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SourceUnavailableError);
      expect((error as SourceUnavailableError).reason).toBe('Redis at 127.0.0.1:16388 refused the connection (is the server running, on that port?)');
      expect(String((error as Error).message)).not.toContain('secret');
    } finally {
      await down.close();
    }
  });
});

describe('unreachable sources are said in words that name them', () => {
  let silent: SilentListener;
  let http: Server;
  let httpPort: number;
  beforeAll(async () => {
    silent = await startSilentListener();
    http = createServer((_request, response) => response.end('hello'));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', () => resolve()));
    httpPort = (http.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await silent.close();
    http.close();
  });

  // Ports 16388 and 15498: nothing listens there (below the test servers' ports, never started).
  it.each([
    { name: 'etcd, a closed port', config: () => ({ endpoints: ['http://127.0.0.1:15498'] }), reason: () => 'reading: etcd at 127.0.0.1:15498 refused the connection (is the server running, on that port?)' },
    { name: 'etcd, a listener that never answers', config: () => ({ endpoints: [`http://127.0.0.1:${silent.port}`] }), reason: () => `reading: etcd at 127.0.0.1:${silent.port} did not answer in time` },
    { name: 'etcd, an HTTP/1 server', config: () => ({ endpoints: [`http://127.0.0.1:${httpPort}`] }), reason: () => `reading: etcd at 127.0.0.1:${httpPort} answers, but not as etcd does (is that its client port?)` },
  ])('$name', async ({ config, reason }) => {
    const source = createSource({ name: 'e', backend: 'etcd', prefixes: ['x/'], ...config() }, 1_000);
    try {
      const error = await source.snapshot(AbortSignal.timeout(10_000)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SourceUnavailableError);
      expect((error as SourceUnavailableError).reason).toBe(reason());
    } finally {
      await source.close();
    }
  });

  // What a connection to a closed local port in the ephemeral range can become: connected to
  // itself, it reads back every command it writes. An echo server answers the same way. Seen
  // once as "toString() radix argument must be between 2 and 36" on the sources page.
  it('redis, a connection that echoes every command back', async () => {
    const echo = createNetServer((socket) => socket.pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', () => resolve()));
    const port = (echo.address() as AddressInfo).port;
    const source = createSource({ name: 'r', backend: 'redis', urls: [`redis://127.0.0.1:${port}`], match: ['x:*'], fenceSuffix: ':fence', keyspaceNotifications: 'off' }, 1_000);
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        const error = await source.snapshot(AbortSignal.timeout(10_000)).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SourceUnavailableError);
        const reason = (error as SourceUnavailableError).reason;
        expect(reason).toMatch(new RegExp(`^Redis at 127\\.0\\.0\\.1:${port} gave an answer to SCAN unlike any Redis server's \\(is Redis on that port\\?`));
        expect(reason).not.toMatch(/radix|undefined|is not a function|Cannot read/);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      await source.close();
      echo.close();
    }
  });

  it('redis, an HTTP/1 server', async () => {
    const source = createSource({ name: 'r', backend: 'redis', urls: [`redis://127.0.0.1:${httpPort}`], match: ['x:*'], fenceSuffix: ':fence', keyspaceNotifications: 'off' }, 1_000);
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const error = await source.snapshot(AbortSignal.timeout(10_000)).catch((e: unknown) => e);
      expect((error as SourceUnavailableError).reason).toBe(`Redis at 127.0.0.1:${httpPort} answers, but not in its protocol (is that the right port?)`);
    } finally {
      await source.close();
    }
  });
});

describe('postgres: untrusted rows and tables of another shape', () => {
  let db: TestDatabase & { url: string };
  beforeAll(async () => {
    db = await createPostgresDatabase('lh_input');
    const sql = new pg.Client(db.url);
    await sql.connect();
    await sql.query(`CREATE TABLE leases (name VARCHAR(200) PRIMARY KEY, owner TEXT, expires_at TIMESTAMPTZ NOT NULL, token BIGINT NOT NULL DEFAULT 0)`);
    await sql.query(`INSERT INTO leases VALUES ($1, $2, now() + interval '1 minute', 3)`, ['job\u0007', `evil\u001b[2J${'x'.repeat(5_000)}`]);
    await sql.query(`CREATE TABLE odd (name TEXT PRIMARY KEY, holder TEXT)`);
    await sql.end();
  });
  afterAll(() => db.drop());

  it('escapes holders and names, and shows a long one as its start and its digest', async () => {
    const source = createSource({ name: 'p', backend: 'postgres', url: db.url, tables: [{ table: 'leases', format: 'leasehold' }], advisoryLocks: false }, 1_000);
    try {
      const [lease] = (await source.snapshot(AbortSignal.timeout(10_000))).observations;
      expect(lease!.key).toBe('leases/job\\x07');
      expect(lease!.holder!.startsWith('evil\\x1b[2J')).toBe(true);
      expect(lease!.holder).toMatch(/…\[5008 bytes, sha256:[0-9a-f]{32}\]$/);
      expect(lease!.holder!.length).toBeLessThan(200);
      expect(lease!.token).toBe(3n);
    } finally {
      await source.close();
    }
  });

  it('a table without the layout\'s columns makes the source unavailable, naming what is missing', async () => {
    const source = createSource({ name: 'p', backend: 'postgres', url: db.url, tables: [{ table: 'odd', format: 'shedlock' }], advisoryLocks: false }, 1_000);
    try {
      const error = await source.snapshot(AbortSignal.timeout(10_000)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SourceUnavailableError);
      expect((error as Error).message).toBe(
        'p: table odd is not in the shedlock layout: it has no column lock_until, locked_at, locked_by (expected name, lock_until, locked_at, locked_by; found name, holder)',
      );
    } finally {
      await source.close();
    }
  });
});

describe('etcd: untrusted keys and values', () => {
  it('escapes binary values and keys, and leaves keys without a lease out', async () => {
    const client = new Etcd3({ hosts: services.etcdEndpoints });
    const prefix = `bad${unique()}/`;
    const source = createSource({ name: 'e', backend: 'etcd', endpoints: services.etcdEndpoints, prefixes: [prefix] }, 1_000);
    try {
      const lease = client.lease(30, { autoKeepAlive: false });
      await lease.put(Buffer.concat([Buffer.from(prefix), Buffer.from([0x6b, 0xff, 0x0a])])).value(Buffer.from([0x00, 0xfe, 0x41]));
      await client.put(`${prefix}plain-config`).value('not a lease');
      const { observations } = await source.snapshot(AbortSignal.timeout(10_000));
      expect(observations).toHaveLength(1);
      expect(observations[0]).toMatchObject({ key: `${prefix}k\\xff\\x0a`, holder: '\\x00\\xfeA', kind: 'lock' });
      await lease.revoke();
    } finally {
      await source.close();
      client.close();
    }
  });
});

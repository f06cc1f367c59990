// What other software may have left in the backends is untrusted input: the lease client
// reports it clearly and leaves nothing half-done behind.
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLeaseClient } from '../../lib/lease';
import { createPostgresDatabase, type TestDatabase } from '../support/databases';
import { testServices } from '../support/services';

const services = testServices();
const unique = () => randomBytes(4).toString('hex');

describe('redis: keys someone else wrote', () => {
  const redis = new Redis(services.redisUrl);
  const client = createLeaseClient({ backend: 'redis', urls: [services.redisUrl] });
  afterAll(async () => {
    await client.close();
    redis.disconnect();
  });

  it('a fence counter holding garbage fails the acquire by name, and leaves no lock behind', async () => {
    const key = `bad:${unique()}`;
    await redis.set(`${key}:fence`, 'not-a-number');
    await expect(client.acquire(key, { holder: 'w', ttlMs: 5_000 })).rejects.toThrow(`fence counter ${key}:fence does not hold a counter`);
    expect(await redis.exists(key)).toBe(0);
  });

  it('a lock key set by other software (binary, no TTL) is seen as held, and never overwritten', async () => {
    const key = `bad:${unique()}`;
    await redis.set(key, Buffer.from([0xff, 0x00, 0xfe]));
    expect(await client.acquire(key, { holder: 'w', ttlMs: 5_000 })).toBeNull();
    const seen = await client.inspect(key);
    expect(seen).toMatchObject({ key, token: null, remainingMs: null });
    expect(typeof seen!.holder).toBe('string');
    expect(await redis.getBuffer(key)).toEqual(Buffer.from([0xff, 0x00, 0xfe]));
  });
});

describe('postgres: a lease table that is not the expected shape', () => {
  let db: TestDatabase & { url: string };
  beforeAll(async () => {
    db = await createPostgresDatabase('lh_badinput');
    const client = new pg.Client(db.url);
    await client.connect();
    await client.query('CREATE TABLE odd_leases (name text PRIMARY KEY, holder text)');
    await client.end();
  });
  afterAll(() => db.drop());

  it('fails with the database error naming the missing column, not a crash', async () => {
    const client = createLeaseClient({ backend: 'postgres', url: db.url, table: 'odd_leases' });
    try {
      await expect(client.acquire('job', { holder: 'w', ttlMs: 5_000 })).rejects.toThrow(/column "owner"|column "expires_at"|column "token"/);
    } finally {
      await client.close();
    }
  });

  it('a table name that is not an identifier is refused before any SQL is sent', () => {
    expect(() => createLeaseClient({ backend: 'postgres', url: db.url, table: 'leases; DROP TABLE x' })).toThrow(/is not a table name/);
  });
});

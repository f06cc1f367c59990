// A source's `canary` in the config file (docs/configuring-sources.md, "Canary leases"): off
// unless given, its defaults, and the entries that cannot be held, refused before anything runs.
import { afterAll, describe, expect, it } from 'vitest';
import { postgresBackend } from '../../lib/sources/postgres/backend';
import { configFiles } from '../support/config-files';

const { configOf, problemsOf, remove } = configFiles('canary-config');
afterAll(remove);

const pg = { name: 'pg-main', backend: 'postgres', url: 'postgres://app:hunter2@127.0.0.1:5432/app', tables: [{ table: 'shedlock', format: 'shedlock' }, { table: 'app.leases', format: 'leasehold' }] };
const redis = { name: 'redis-main', backend: 'redis', urls: ['redis://127.0.0.1:6379'] };
const etcd = { name: 'etcd-main', backend: 'etcd', endpoints: ['http://127.0.0.1:2379'], prefixes: ['election/'] };

describe('canary in a source entry', () => {
  it('is off unless given, and takes its TTL and interval from the defaults', () => {
    const config = configOf({ sources: [redis, { ...etcd, canary: { key: 'election/leasehold-canary' } }] });
    expect(config.sources[0]!.canary).toBeUndefined();
    expect(config.sources[1]!.canary).toEqual({ key: 'election/leasehold-canary', ttlMs: 10_000, everyMs: 2_000 });
  });

  it('is accepted on every kind, a PostgreSQL source holding it in its first leasehold table', () => {
    const config = configOf({ sources: [{ ...pg, canary: { key: 'canary', ttlMs: 4_000, everyMs: 1_000 } }, { ...redis, canary: { key: 'lh:canary', ttlMs: 1_000, everyMs: 500 } }] });
    expect(config.sources.map((s) => s.canary?.key)).toEqual(['canary', 'lh:canary']);
    expect(postgresBackend.canary!(config.sources[0] as never, config.sources[0]!.canary!, { embedded: null })).toMatchObject({ client: { backend: 'postgres', table: 'app.leases', ensureTable: false }, observedKey: 'app.leases/canary' });
  });

  it('refuses what cannot be held, naming the field', () => {
    expect(problemsOf({ sources: [{ ...pg, tables: [{ table: 'shedlock', format: 'shedlock' }], canary: { key: 'canary' } }] })).toEqual([
      expect.stringMatching(/sources\[0\] \("[a-z-]+"\)\.canary.*format "leasehold"/),
    ]);
    expect(problemsOf({ sources: [{ ...etcd, canary: { key: 'election/c', ttlMs: 1_000, everyMs: 200 } }] })).toEqual([expect.stringMatching(/sources\[0\] \("[a-z-]+"\)\.canary.*at least 2000 ms on etcd/)]);
    expect(problemsOf({ sources: [{ ...redis, canary: { key: 'c', ttlMs: 2_000, everyMs: 1_500 } }] })).toEqual([expect.stringMatching(/everyMs.*at most half the canary's ttlMs \(1000 ms\)/)]);
    expect(problemsOf({ sources: [{ ...redis, canary: { key: '' } }] })).toEqual([expect.stringMatching(/canary\.key/)]);
    expect(problemsOf({ sources: [{ ...redis, canary: { key: 'c', every: 100 } }] })).toEqual([expect.stringMatching(/canary.*every/)]);
  });
});

describe("the canary's key in messages", () => {
  it('is a lease key, not a secret: it is not scrubbed, while the source\'s real secrets are', async () => {
    const { secretsOf, scrub } = await import('../../lib/redact');
    const source = { ...pg, canary: { key: 'leasehold-canary', ttlMs: 4_000, everyMs: 1_000, apiKey: 'not-this-one' } };
    const secrets = secretsOf({ sources: [source] });
    expect(secrets).toContain('hunter2');
    expect(secrets).not.toContain('leasehold-canary');
    expect(scrub('canary leasehold-canary refused by app:hunter2@', secrets)).toBe('canary leasehold-canary refused by app:***@');
    // Another field of the canary named like a secret still is one.
    expect(secrets).toContain('not-this-one');
  });
});

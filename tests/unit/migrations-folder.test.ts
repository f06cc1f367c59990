import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readMigrations } from '../../lib/db/migrate';

const dir = path.resolve('prisma/migrations');

describe('prisma/migrations is in Prisma folder format', () => {
  const migrations = readMigrations(dir);

  it('has a migration_lock.toml for postgresql', () => {
    expect(readFileSync(path.join(dir, 'migration_lock.toml'), 'utf8')).toMatch(/^provider = "postgresql"$/m);
  });

  it('names every folder <14-digit timestamp>_<name> and keeps them in order', () => {
    const folders = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(folders.length).toBeGreaterThan(0);
    for (const folder of folders) expect(folder).toMatch(/^\d{14}_[a-z0-9_]+$/);
    expect(migrations.map((m) => m.name)).toEqual([...folders].sort());
  });

  it('checksums are the sha256 hex of the file bytes, as Prisma records them', () => {
    for (const migration of migrations) {
      const bytes = readFileSync(path.join(dir, migration.name, 'migration.sql'));
      expect(migration.checksum).toBe(createHash('sha256').update(bytes).digest('hex'));
      expect(migration.checksum).toMatch(/^[0-9a-f]{64}$/);
    }
  });
});

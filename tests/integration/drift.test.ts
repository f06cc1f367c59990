// The migrated database agrees with prisma/schema.prisma, and the checker that says so
// is shown to catch each kind of disagreement (a drift check that cannot fail proves nothing).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDrift } from '../../lib/db/drift';
import { migrate, readMigrations } from '../../lib/db/migrate';
import type { SqlSession } from '../../lib/db/sql';
import { STORE_KINDS, type TestDatabase } from '../support/databases';

const schemaPath = path.resolve('prisma/schema.prisma');
const schema = readFileSync(schemaPath, 'utf8');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'leasehold-drift-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function schemaVariant(edit: (text: string) => string): string {
  const edited = edit(schema);
  if (edited === schema) throw new Error('the schema edit changed nothing; the test is wrong');
  const file = path.join(scratch, `schema-${Math.random().toString(36).slice(2)}.prisma`);
  writeFileSync(file, edited);
  return file;
}

// Each case changes the database after migrating, and names the difference the checker must report.
const DATABASE_DRIFT = [
  { name: 'a dropped column', sql: 'ALTER TABLE "Lease" DROP COLUMN "holder"', expect: 'column "Lease"."holder" is missing from the database' },
  { name: 'an extra column', sql: 'ALTER TABLE "Lease" ADD COLUMN "note" text', expect: 'column "Lease"."note" is in the database but not in the schema' },
  { name: 'a changed type', sql: 'ALTER TABLE "LeaseEvent" ALTER COLUMN "gapMs" TYPE integer', expect: 'column "LeaseEvent"."gapMs" has type integer, the schema says bigint' },
  { name: 'a changed nullability', sql: 'ALTER TABLE "Lease" ALTER COLUMN "kind" DROP NOT NULL', expect: 'column "Lease"."kind" is nullable, the schema says NOT NULL' },
  { name: 'a changed default', sql: 'ALTER TABLE "AlertRule" ALTER COLUMN "enabled" SET DEFAULT false', expect: 'column "AlertRule"."enabled" has default false, the schema says true' },
  { name: 'a dropped index', sql: 'DROP INDEX "LeaseEvent_leaseId_seq_at_key"', expect: 'index "LeaseEvent_leaseId_seq_at_key" on "LeaseEvent" is missing from the database' },
  { name: 'a dropped index of a plain table', sql: 'DROP INDEX "Lease_state_idx"', expect: 'index "Lease_state_idx" on "Lease" is missing from the database' },
  { name: 'an extra index', sql: 'CREATE INDEX "Source_backend_idx" ON "Source"("backend")', expect: 'index "Source_backend_idx" on "Source" is in the database but not in the schema' },
  {
    name: 'a changed foreign key action',
    sql: 'ALTER TABLE "Session" DROP CONSTRAINT "Session_userId_fkey", ADD CONSTRAINT "Session_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE RESTRICT ON UPDATE CASCADE',
    expect: 'foreign key "Session_userId_fkey" on "Session" is (userId) REFERENCES "User"(id) ON DELETE RESTRICT',
  },
  { name: 'a missing table', sql: 'DROP TABLE "CollectorLease"', expect: 'table "CollectorLease" is missing from the database' },
  { name: 'an extra table', sql: 'CREATE TABLE "Stray" (id int)', expect: 'table "Stray" is in the database but not in the schema' },
  { name: 'an extra enum value', sql: `ALTER TYPE "Role" ADD VALUE 'owner'`, expect: 'enum "Role" has values (viewer, operator, admin, owner), the schema says (viewer, operator, admin)' },
];

// Each case changes the schema file, and names the difference the checker must report.
const SCHEMA_DRIFT = [
  {
    name: 'a field the database lacks',
    edit: (s: string) => s.replace('  fenced      Boolean   @default(false)', '  fenced      Boolean   @default(false)\n  pinned      Boolean   @default(false)'),
    expect: 'column "Lease"."pinned" is missing from the database',
  },
  {
    name: 'an index the database lacks',
    edit: (s: string) => s.replace('  @@index([state])', '  @@index([state])\n  @@index([holder])'),
    expect: 'index "Lease_holder_idx" on "Lease" is missing from the database',
  },
  {
    name: 'a changed native type',
    edit: (s: string) => s.replace('name      String   @id @db.VarChar(200)', 'name      String   @id @db.VarChar(100)'),
    expect: 'column "CollectorLease"."name" has type character varying(200), the schema says character varying(100)',
  },
];

describe.each(STORE_KINDS)('drift check on $kind', ({ create }) => {
  let db: TestDatabase;
  let sql: SqlSession;
  beforeAll(async () => {
    db = await create();
    sql = await db.connect();
    await migrate(sql, { migrations: readMigrations(path.resolve('prisma/migrations')) });
  });
  afterAll(async () => {
    await sql.close();
    await db.drop();
  });

  it('the migrated database matches schema.prisma', async () => {
    expect(await checkDrift(sql, schemaPath)).toEqual([]);
  });

  it.each(SCHEMA_DRIFT)('catches $name in the schema', async ({ edit, expect: sentence }) => {
    const differences = await checkDrift(sql, schemaVariant(edit));
    expect(differences.some((d) => d.startsWith(sentence)), differences.join('\n')).toBe(true);
  });

  it.each(DATABASE_DRIFT)('catches $name in the database', async ({ sql: change, expect: sentence }) => {
    // Each change is made inside a transaction that is rolled back, so the cases stay independent.
    const differences = await sql
      .transaction(async (tx) => {
        await tx.exec(change);
        throw Object.assign(new Error('rollback'), { differences: await checkDrift(tx, schemaPath) });
      })
      .catch((error: { differences?: string[] }) => {
        if (!error.differences) throw error;
        return error.differences;
      });
    expect(differences.some((d) => d.startsWith(sentence)), differences.join('\n')).toBe(true);
    expect(await checkDrift(sql, schemaPath)).toEqual([]);
  });
});

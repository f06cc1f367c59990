// The audit log is a hash chain (lib/db/audit.ts, lib/db/audit-chain.ts) on both store kinds:
// entries verify however large their tokens and however their detail's keys are ordered;
// concurrent appends make one chain without forks; an entry changed or removed behind the
// application's back (as the table owner, triggers disabled) is named by verifyAuditChain and by
// `leasehold audit verify`. The listing filters and pages, and exports as CSV.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { AUDIT_CHAIN_MIGRATION, AuditInputError, appendAudit, auditEntryView, listAudit, verifyAuditChain, type AuditInput, type AuditRow } from '../../lib/db/audit';
import { migrate, readMigrations } from '../../lib/db/migrate';
import { openStore, type Store } from '../../lib/db/store';
import { auditCsv, auditPage } from '../../lib/queries/audit';
import { STORE_KINDS, type TestDatabase } from '../support/databases';
import { STACK_LINE, cli } from '../support/run';

const HUGE = 2n ** 130n + 7n; // above 2^128
const base: AuditInput = { requestId: 'r0', phase: 'requested', action: 'force-expire', actor: 'alice', actorRole: 'operator', authMethod: 'password' };

describe.each(STORE_KINDS)('the audit chain on $kind', ({ create }) => {
  let db: TestDatabase;
  let store: Store;
  const written: AuditRow[] = [];
  beforeAll(async () => {
    db = await create();
    store = await openStore(db.storeConfig());
  });
  afterAll(async () => {
    await store.close();
    await db.drop();
  });

  /** As the table owner, with the append-only trigger disabled for one statement (what an attacker with the owner's password could do). */
  const behindTheBack = (sql: string, params: unknown[]) =>
    store.withSql((s) =>
      s.transaction(async (tx) => {
        await tx.exec('ALTER TABLE "AuditEntry" DISABLE TRIGGER "AuditEntry_no_update_delete"');
        await tx.query(sql, params);
        await tx.exec('ALTER TABLE "AuditEntry" ENABLE TRIGGER "AuditEntry_no_update_delete"');
      }),
    );

  /** `leasehold audit verify` on this store (PGlite: the CLI needs the data directory, so the store is closed meanwhile). */
  async function verifyCli(args: string[] = []) {
    const config = db.storeConfig();
    if (config.kind === 'postgres') return cli(['audit', 'verify', ...args], { LEASEHOLD_CONFIG: undefined, DATABASE_URL: config.url });
    await store.close();
    try {
      return await cli(['audit', 'verify', ...args], { LEASEHOLD_CONFIG: undefined, DATABASE_URL: undefined, LEASEHOLD_DATA_DIR: config.dataDir });
    } finally {
      store = await openStore(config);
    }
  }

  it('an empty log verifies', async () => {
    expect(await verifyAuditChain(store)).toEqual({ ok: true, checked: 0 });
  });

  it('appends entries with huge tokens and detail in any key order, and they verify', async () => {
    const inputs: AuditInput[] = [
      { ...base, requestId: 'r1', clientAddress: '2001:db8::7', leaseId: 'pg/leases/weekly-digest', reason: 'holder wedged in GC', expectedHolder: 'worker-7', expectedToken: HUGE.toString(), detail: { zeta: 1, alpha: { y: [3, { b: 1, a: 2 }], x: 'é' }, Ω: null, big: 2n ** 70n } },
      { ...base, requestId: 'r1', phase: 'done', status: 200, leaseId: 'pg/leases/weekly-digest', actualHolder: 'worker-7', actualToken: HUGE, previousToken: HUGE, newToken: HUGE + 1n, detail: { n: [1e21, 0.1, -0, 5e-324], '': 'empty key', __proto__x: true } },
      { ...base, requestId: 'r2', phase: 'refused', status: 409, actor: 'bob', authMethod: 'token', leaseId: 'redis/lock:a', expectedHolder: 'w1', actualHolder: 'w2', reason: 'tab\there, "quoted", line\nbreak' },
      { ...base, requestId: 'r3', phase: 'error', status: 502, actor: 'carol', authMethod: 'oidc', dryRun: true, reason: 'lone \ud800 surrogate', detail: [{ '\u{1F600}': 'emoji key', '\uFFFF': 'last BMP', a: 'first' }] },
      { ...base, requestId: 'r4', actor: 'anonymous', actorRole: 'viewer', authMethod: 'anonymous', detail: null },
    ];
    for (const input of inputs) written.push(await appendAudit(store, input));
    expect(written[0]!.prevHash).toBeNull();
    for (let i = 1; i < written.length; i++) {
      expect(written[i]!.prevHash).toBe(written[i - 1]!.hash);
      expect(written[i]!.id).toBeGreaterThan(written[i - 1]!.id);
    }
    const view = auditEntryView(written[1]!);
    expect(view).toMatchObject({ id: written[1]!.id.toString(), actualToken: HUGE.toString(), previousToken: HUGE.toString(), newToken: (HUGE + 1n).toString(), status: 200 });
    expect(auditEntryView(written[0]!).detail).toEqual({ alpha: { x: 'é', y: [3, { a: 2, b: 1 }] }, big: (2n ** 70n).toString(), zeta: 1, Ω: null });
    expect(written[3]!.reason).toBe('lone \uFFFD surrogate'); // as the store keeps it, and hashed so
    // jsonb keeps its own key order; the hash does not depend on it.
    expect(await verifyAuditChain(store, { batch: 2 })).toEqual({ ok: true, checked: 5, head: { id: written[4]!.id.toString(), hash: written[4]!.hash } });
  });

  it('refuses entries the store could not keep as they were hashed, and writes nothing', async () => {
    await expect(appendAudit(store, { ...base, reason: 'nul \u0000 byte' })).rejects.toThrow(AuditInputError);
    await expect(appendAudit(store, { ...base, phase: 'refused' })).rejects.toThrow(/a refusal needs its status/);
    await expect(appendAudit(store, { ...base, expectedToken: '1e5' })).rejects.toThrow(/expectedToken must be a whole number/);
    await expect(appendAudit(store, { ...base, newToken: 10n ** 78n })).rejects.toThrow(/more than 78 digits/);
    expect((await verifyAuditChain(store)).checked).toBe(written.length);
  });

  it('50 concurrent appends make one chain: intact, no two entries with one prevHash', async () => {
    const rows = await Promise.all(Array.from({ length: 50 }, (_, i) => appendAudit(store, { ...base, requestId: `c${i}`, actor: `racer-${i % 5}`, leaseId: `redis/lock:${i % 3}` })));
    written.push(...rows.sort((a, b) => (a.id < b.id ? -1 : 1)));
    const report = await verifyAuditChain(store, { batch: 7 });
    expect(report).toMatchObject({ ok: true, checked: written.length });
    const forks = await store.withSql((s) => s.query('SELECT "prevHash", count(*) FROM "AuditEntry" GROUP BY "prevHash" HAVING count(*) > 1'));
    expect(forks).toEqual([]);
  });

  it('lists entries newest first, filtered, a page at a time', async () => {
    const all = [...written].reverse();
    const pages: AuditRow[] = [];
    let cursor: bigint | undefined;
    for (let n = 0; n < 10; n++) {
      const page = await listAudit(store, { actor: 'racer-1', limit: 3, cursor });
      pages.push(...page.rows);
      if (page.next === null) break;
      cursor = BigInt(page.next);
    }
    expect(pages.map((r) => r.id)).toEqual(all.filter((r) => r.actor === 'racer-1').map((r) => r.id));
    expect(pages).toHaveLength(10);

    const ids = async (filter: Parameters<typeof listAudit>[1]) => (await listAudit(store, filter)).rows.map((r) => r.id);
    expect(await ids({ leaseId: 'redis/lock:a', limit: 100 })).toEqual([written[2]!.id]);
    expect(await ids({ action: 'force-expire', phase: 'refused', limit: 100 })).toEqual([written[2]!.id]);
    expect(await ids({ phase: 'done', limit: 100 })).toEqual([written[1]!.id]);
    expect(await ids({ action: 'no-such-action', limit: 100 })).toEqual([]);
    const middle = written[20]!.at;
    expect(await ids({ since: middle, limit: 1_000 })).toEqual(all.filter((r) => r.at >= middle).map((r) => r.id));
    expect(await ids({ until: middle, limit: 1_000 })).toEqual(all.filter((r) => r.at < middle).map((r) => r.id));
    expect(await ids({ since: middle, until: middle, limit: 1_000 })).toEqual([]);

    const page = await auditPage(store, { actor: 'bob', limit: 10 });
    expect(page).toEqual({ entries: [auditEntryView(written[2]!)], next: null });
  });

  it('exports the matching entries as CSV, at most `limit`', async () => {
    const some = await auditCsv(store, { actor: 'racer-2', limit: 4 });
    expect(some).toMatchObject({ rows: 4, truncated: true, filename: expect.stringMatching(/^leasehold-audit-[\d-]+\.csv$/) });
    const lines = some!.csv.split('\r\n');
    expect(lines[0]).toBe('\uFEFFid,at,request_id,phase,status,action,actor,actor_role,auth_method,client_address,lease,reason,expected_holder,expected_token,actual_holder,actual_token,previous_token,new_token,dry_run,detail,prev_hash,hash');
    expect(lines.slice(1, -1).map((line) => line.split(',')[0])).toEqual(
      [...written].reverse().filter((r) => r.actor === 'racer-2').slice(0, 4).map((r) => r.id.toString()),
    );
    expect(await auditCsv(store, { actor: 'racer-2', limit: 10 })).toMatchObject({ rows: 10, truncated: false });
    const bob = await auditCsv(store, { actor: 'bob', limit: 100 });
    expect(bob!.csv).toContain(`,"tab\there, ""quoted"", line\nbreak",w1,,w2,,,,false,,${written[1]!.hash},${written[2]!.hash}\r\n`);
  });

  it('`leasehold audit verify` says the chain is intact and exits 0', async () => {
    const result = await verifyCli();
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`audit chain intact: ${written.length} entries\nlast entry: ${written.at(-1)!.id}, hash ${written.at(-1)!.hash}\n`);
  });

  it('an entry changed behind the application\'s back is named, by the repository and the CLI (exit 1)', async () => {
    const target = written[3]!;
    await behindTheBack(`UPDATE "AuditEntry" SET reason = 'nothing to see here' WHERE id = $1::bigint`, [target.id.toString()]);
    const report = await verifyAuditChain(store, { batch: 2 });
    expect(report).toMatchObject({ ok: false, checked: 3, firstBroken: { id: target.id.toString(), reason: expect.stringMatching(/content does not match its hash/) } });

    const result = await verifyCli();
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`audit chain broken at entry ${target.id}: its content does not match its hash`);
    expect(result.stderr).not.toMatch(STACK_LINE);
    const json = await verifyCli(['--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, checked: 3, firstBroken: { id: target.id.toString() } });

    // Put back as it was, it verifies again: the hash covers the content, nothing else.
    await behindTheBack(`UPDATE "AuditEntry" SET reason = $2 WHERE id = $1::bigint`, [target.id.toString(), target.reason]);
    expect(await verifyAuditChain(store)).toMatchObject({ ok: true, checked: written.length });
  });

  it('an entry removed from the middle is noticed at the next one', async () => {
    const [before, removed, next] = written.slice(9, 12) as [AuditRow, AuditRow, AuditRow];
    await behindTheBack('DELETE FROM "AuditEntry" WHERE id = $1::bigint', [removed.id.toString()]);
    const report = await verifyAuditChain(store, { batch: 4 });
    expect(report).toMatchObject({ ok: false, checked: 10, firstBroken: { id: next.id.toString(), reason: expect.stringContaining(`its prevHash is not the hash of entry ${before.id}`) } });
    // The log stays writable; the break stays where it is.
    await appendAudit(store, { ...base, requestId: 'after' });
    expect((await verifyAuditChain(store)).firstBroken?.id).toBe(next.id.toString());
  });

  it('the first entry removed is noticed too', async () => {
    await behindTheBack('DELETE FROM "AuditEntry" WHERE id = $1::bigint', [written[0]!.id.toString()]);
    expect(await verifyAuditChain(store)).toMatchObject({ ok: false, checked: 0, firstBroken: { id: written[1]!.id.toString(), reason: expect.stringMatching(/first entry but names a previous hash/) } });
  });
});

describe.each(STORE_KINDS)('the audit chain migration on $kind', ({ create }) => {
  it('stops on entries written before it, which it cannot give hashes, and changes nothing', async () => {
    const db = await create();
    const sql = await db.connect();
    try {
      const migrations = readMigrations(path.resolve('prisma/migrations'));
      await migrate(sql, { migrations: migrations.filter((m) => m.name < AUDIT_CHAIN_MIGRATION) });
      await sql.query(`INSERT INTO "AuditEntry" ("requestId", phase, action, actor, "actorRole") VALUES ('old', 'requested', 'force-expire', 'alice', 'operator')`);
      await expect(migrate(sql, { migrations })).rejects.toThrow(
        new RegExp(`Migration ${AUDIT_CHAIN_MIGRATION} failed and was rolled back: AuditEntry has entries written before the audit chain existed`),
      );
      const columns = await sql.query(`SELECT 1 FROM information_schema.columns WHERE table_name = 'AuditEntry' AND column_name = 'hash'`);
      expect(columns).toEqual([]);
    } finally {
      await sql.close();
      await db.drop();
    }
  });
});

// One contract, every implementation: the migration runner and the drift check speak SQL
// through SqlSession, so a PostgreSQL connection and an embedded PGlite must behave the
// same for everything they rely on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlSession } from '../../lib/db/sql';
import { STORE_KINDS, type TestDatabase } from '../support/databases';

describe.each(STORE_KINDS)('SqlSession contract: $kind', ({ create }) => {
  let db: TestDatabase;
  let sql: SqlSession;
  beforeAll(async () => {
    db = await create();
    sql = await db.connect();
    await sql.exec('CREATE TABLE kv (k text PRIMARY KEY, v bigint NOT NULL); CREATE TABLE log (line text)');
  });
  afterAll(async () => {
    await sql.close();
    await db.drop();
  });

  it('binds parameters and returns typed rows', async () => {
    await sql.query('INSERT INTO kv VALUES ($1, $2)', ['a', '9007199254740993']);
    const rows = await sql.query<{ k: string; v: string; n: number; t: Date; b: boolean }>(
      `SELECT k, v::text AS v, 1::int AS n, now() AS t, true AS b FROM kv WHERE k = $1`,
      ['a'],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ k: 'a', v: '9007199254740993', n: 1, b: true });
    expect(rows[0]!.t).toBeInstanceOf(Date);
  });

  it('runs a script of several statements', async () => {
    await sql.exec("INSERT INTO log VALUES ('one'); INSERT INTO log VALUES ('two');");
    expect(await sql.query('SELECT line FROM log ORDER BY line')).toEqual([{ line: 'one' }, { line: 'two' }]);
  });

  it('commits a transaction whose work resolves', async () => {
    const result = await sql.transaction(async (tx) => {
      await tx.query('INSERT INTO kv VALUES ($1, $2)', ['committed', 1]);
      return 'done';
    });
    expect(result).toBe('done');
    expect(await sql.query('SELECT k FROM kv WHERE k = $1', ['committed'])).toHaveLength(1);
  });

  it('rolls back everything a failing transaction did, and stays usable', async () => {
    const failure = sql.transaction(async (tx) => {
      await tx.query('INSERT INTO kv VALUES ($1, $2)', ['rolled-back', 1]);
      await tx.exec("INSERT INTO log VALUES ('in-tx')");
      await tx.query('INSERT INTO kv VALUES ($1, $2)', ['rolled-back', 2]); // duplicate key
    });
    await expect(failure).rejects.toThrow(/duplicate key/);
    expect(await sql.query('SELECT k FROM kv WHERE k = $1', ['rolled-back'])).toEqual([]);
    expect(await sql.query("SELECT line FROM log WHERE line = 'in-tx'")).toEqual([]);
    expect(await sql.query('SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
  });

  it('fails a bad statement with the database error, and stays usable', async () => {
    await expect(sql.query('SELECT * FROM no_such_table')).rejects.toThrow(/no_such_table/);
    await expect(sql.exec('SELECT 1; SELEC 2;')).rejects.toThrow(/syntax error/);
    expect(await sql.query('SELECT 2 AS ok')).toEqual([{ ok: 2 }]);
  });
});

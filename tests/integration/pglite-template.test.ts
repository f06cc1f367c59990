// New embedded data directories are copied from a template made once (lib/db/pglite-template.ts):
// the copy opens as a database of its own, and nothing is copied over a directory in use.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, expect, it } from 'vitest';
import { fillFromTemplate, isDataDirectory, makeTemplate, templatePath } from '@/lib/db/pglite-template';
import { ROOT } from '../support/services';

// A project root of its own (its node_modules the real one), so the real template is not touched.
const root = mkdtempSync(path.join(os.tmpdir(), 'leasehold-template-'));
symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('copies nothing while there is no template', () => {
  const dir = path.join(root, 'none');
  expect(fillFromTemplate(dir, root)).toBe(false);
  expect(isDataDirectory(dir)).toBe(false);
});

it('makes the template once per PGlite version, and a copy opens as a database of its own', async () => {
  const made = await makeTemplate(root);
  expect(made.made).toBe(true);
  expect(made.path).toBe(templatePath(root));
  expect(made.path).toMatch(/\.leasehold\/pglite-template\/\d+\.\d+\.\d+/);
  expect((await makeTemplate(root)).made).toBe(false);

  const a = path.join(root, 'a', 'data');
  const b = path.join(root, 'b', 'data');
  expect(fillFromTemplate(a, root)).toBe(true);
  expect(fillFromTemplate(b, root)).toBe(true);
  const dbA = await PGlite.create(a);
  await dbA.exec("CREATE TABLE t (v text); INSERT INTO t VALUES ('only in a')");
  await dbA.close();
  const dbB = await PGlite.create(b);
  const { rows } = await dbB.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 't'");
  expect(rows[0]!.n).toBe(0);
  await dbB.close();
  const again = await PGlite.create(a);
  expect((await again.query<{ v: string }>('SELECT v FROM t')).rows).toEqual([{ v: 'only in a' }]);
  await again.close();
}, 60_000);

it('never copies into a directory that holds anything', async () => {
  await makeTemplate(root);
  const dir = path.join(root, 'busy');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'notes.txt'), 'mine');
  expect(fillFromTemplate(dir, root)).toBe(false);
  expect(isDataDirectory(dir)).toBe(false);
}, 60_000);

it('fills an empty directory that is there already, and makes again a copy that was cut short', async () => {
  await makeTemplate(root);
  const dir = path.join(root, 'mount', 'data');
  mkdirSync(dir, { recursive: true });
  expect(fillFromTemplate(dir, root)).toBe(true);
  expect(isDataDirectory(dir)).toBe(true);
  expect(existsSync(path.join(dir, '.leasehold-copying'))).toBe(false);

  // Killed halfway: the marker is still there, PG_VERSION (copied last) is not.
  const cut = path.join(root, 'cut', 'data');
  mkdirSync(path.join(cut, 'base'), { recursive: true });
  writeFileSync(path.join(cut, '.leasehold-copying'), '1\n');
  writeFileSync(path.join(cut, 'base', 'half-a-file'), 'x');
  expect(isDataDirectory(cut)).toBe(false);
  expect(fillFromTemplate(cut, root)).toBe(true);
  expect(isDataDirectory(cut)).toBe(true);
  expect(existsSync(path.join(cut, 'base', 'half-a-file'))).toBe(false);
  const db = await PGlite.create(cut);
  expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  await db.close();
}, 60_000);

it('removes the scratch copy a killed process left beside the data directory', async () => {
  await makeTemplate(root);
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
  const dir = path.join(root, 'swept', 'data');
  const leftover = `${dir}.copy-${dead}.tmp`;
  mkdirSync(leftover, { recursive: true });
  writeFileSync(path.join(leftover, 'PG_VERSION'), '17\n');
  expect(fillFromTemplate(dir, root)).toBe(true);
  expect(existsSync(leftover)).toBe(false);
  expect(isDataDirectory(dir)).toBe(true);
}, 60_000);

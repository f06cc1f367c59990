// New embedded data directories are copied from a template made once (lib/db/pglite-template.ts):
// the copy opens as a database of its own, and nothing is copied over a directory in use.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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

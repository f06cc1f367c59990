// Every read and write of the store goes through lib/db: the rest of Leasehold calls its
// functions and never reaches the store's Prisma client, its SQL sessions or a connection of
// its own. (lib/lease, lib/sources and lib/demo connect to the backends they hold or observe,
// which are not the store.)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const OWN_CONNECTIONS = ['lib/db/', 'lib/lease/', 'lib/sources/', 'lib/demo/', 'lib/generated/'];

/** What reaches the store around lib/db, in one file's text: the offending snippets. */
export function storeReaches(text: string): string[] {
  const found: string[] = [];
  for (const pattern of [/\.prisma\.\w+/g, /\bstore\.transaction\(/g, /\$(queryRaw|executeRaw)(Unsafe)?\b/g, /\bsql\.query\b/g, /^import (?!type )[^;]*from 'pg';/gm]) {
    for (const match of text.matchAll(pattern)) found.push(match[0]);
  }
  return found;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(file);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [file] : [];
  });
}

describe('the store is reached through lib/db only', () => {
  it('no file of lib/, app/, components/ or bin/ outside lib/db reaches it', () => {
    const offending = ['lib', 'app', 'components', 'bin']
      .flatMap((dir) => sourceFiles(path.join(ROOT, dir)))
      .map((file) => path.relative(ROOT, file).split(path.sep).join('/'))
      .filter((file) => !OWN_CONNECTIONS.some((own) => file.startsWith(own)))
      .flatMap((file) => storeReaches(readFileSync(path.join(ROOT, file), 'utf8')).map((what) => `${file}: ${what}`));
    expect(offending).toEqual([]);
  });

  it('finds a reach when there is one (the checker itself)', () => {
    expect(storeReaches("const row = await store.prisma.alertRule.findUnique({ where: { id } });")).toEqual(['.prisma.alertRule']);
    expect(storeReaches("await store.transaction(async (sql) => { await sql.query('SELECT 1'); });")).toEqual(['store.transaction(', 'sql.query']);
    expect(storeReaches("import pg from 'pg';\nimport type { Client } from 'pg';")).toEqual(["import pg from 'pg';"]);
    expect(storeReaches("import type pg from 'pg';\nconst x = readLeaseRenewals(store, id);")).toEqual([]);
  });
});

// The lint rule that keeps lib/domain pure must actually fire: a rule that never
// reports anything would let the first careless import through unnoticed.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint();

async function restrictedImports(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('lib/domain stays free of I/O and frameworks', () => {
  it.each([
    "import pg from 'pg';",
    "import Redis from 'ioredis';",
    "import { Etcd3 } from 'etcd3';",
    "import { NextResponse } from 'next/server';",
    "import { PrismaClient } from '@prisma/client';",
    "import { PrismaClient } from '../generated/prisma/client';",
    "import { readFileSync } from 'node:fs';",
    "import { getStore } from '../db';",
    "import { getStore } from '@/lib/db';",
    "import { PGlite } from '@electric-sql/pglite';",
  ])('rejects %s', async (line) => {
    const messages = await restrictedImports(`${line}\nexport const x = 1;\n`, 'lib/domain/example.ts');
    expect(messages.length).toBe(1);
  });

  it.each(["import { parseLeaseId } from './lease-id';", "import type { LeaseView } from '@/lib/domain/types';"])(
    'allows %s',
    async (line) => {
      expect(await restrictedImports(`${line}\nexport const x = 1;\n`, 'lib/domain/example.ts')).toEqual([]);
    },
  );

  it('does not restrict the rest of lib', async () => {
    expect(await restrictedImports("import pg from 'pg';\nexport const x = pg;\n", 'lib/db/example.ts')).toEqual([]);
  });
});

describe('lib/lease stands alone: packages and its own files only', () => {
  it.each(["import type { PgPoolLike } from '../db/pg-like';", "import { getConfig } from '@/lib/config';", "import { displayText } from '../domain/display';"])(
    'rejects %s',
    async (line) => {
      expect(await restrictedImports(`${line}\nexport const x = 1;\n`, 'lib/lease/example.ts')).toHaveLength(1);
    },
  );

  it.each(["import type { PgPoolLike } from './pg-pool';", "import Redis from 'ioredis';", "import { randomBytes } from 'node:crypto';"])('allows %s', async (line) => {
    expect(await restrictedImports(`${line}\nexport const x = 1;\n`, 'lib/lease/example.ts')).toEqual([]);
  });
});

// No two folders of lib/ import each other, directly or round a longer loop: a folder is a
// layer, and layers depend one way (the domain below everything; the live stream below the
// read models; the lease library below nothing of Leasehold's).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cycles, folderImports } from '../support/import-graph';

const LIB = path.resolve(import.meta.dirname, '../../lib');

describe('the folders of lib/ import each other one way only', () => {
  it('has no cycle', () => {
    const graph = folderImports(LIB);
    const loops = cycles(graph).map((loop) => {
      const steps = loop.split(' → ');
      return `${loop} (${steps.slice(0, -1).map((from, i) => graph.get(from)!.get(steps[i + 1]!)).join(', ')})`;
    });
    expect(loops).toEqual([]);
  });

  it('the lease library imports no other folder, and the domain none of the I/O layers', () => {
    const graph = folderImports(LIB);
    expect([...(graph.get('lease')?.keys() ?? [])]).toEqual([]);
    expect([...(graph.get('domain')?.keys() ?? [])].filter((to) => ['db', 'sources', 'collector', 'live', 'queries', 'api'].includes(to))).toEqual([]);
  });

  it('finds a loop when there is one (the checker itself)', () => {
    const graph = new Map([
      ['collector', new Map([['live', 'collector/a.ts']])],
      ['live', new Map([['queries', 'live/relay.ts']])],
      ['queries', new Map([['collector', 'queries/cache.ts'], ['db', 'queries/x.ts']])],
      ['db', new Map<string, string>()],
    ]);
    expect(cycles(graph)).toEqual(['collector → live → queries → collector']);
    graph.get('queries')!.delete('collector');
    expect(cycles(graph)).toEqual([]);
  });

  it('sees an import of a folder itself (its index.ts) as an import of that folder', () => {
    // The loop config → demo → db → config once passed unseen: `../config` and `../db` were
    // read as files config.ts and db.ts at lib's root, not as the folders.
    const lib = mkdtempSync(path.join(os.tmpdir(), 'leasehold-cycles-'));
    try {
      const write = (file: string, text: string) => {
        mkdirSync(path.dirname(path.join(lib, file)), { recursive: true });
        writeFileSync(path.join(lib, file), text);
      };
      write('config/index.ts', "import { ENTRY } from '../demo/source';\nexport const config = ENTRY;\n");
      write('demo/source.ts', "import { getStore } from '../db';\nexport const ENTRY = getStore;\n");
      write('db/index.ts', "import { config } from '@/lib/config';\nexport const getStore = () => config;\n");
      write('errors.ts', 'export const x = 1;\n');
      write('api/x.ts', "import { x } from '../errors';\nexport const y = x;\n");
      expect(cycles(folderImports(lib))).toEqual(['config → demo → db → config']);
      expect([...folderImports(lib).get('api')!.keys()]).toEqual(['errors.ts']);
      write('db/index.ts', 'export const getStore = () => null;\n');
      expect(cycles(folderImports(lib))).toEqual([]);
    } finally {
      rmSync(lib, { recursive: true, force: true });
    }
  });
});

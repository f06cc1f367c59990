// No two folders of lib/ import each other, directly or round a longer loop: a folder is a
// layer, and layers depend one way (the domain below everything; the live stream below the
// read models; the lease library below nothing of Leasehold's).
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
});

import type { IKeyValue } from 'etcd3';
import { describe, expect, it } from 'vitest';
import { Mirror, remember } from './state';

const kv = (key: string, lease = '7'): IKeyValue => ({ key: Buffer.from(key, 'latin1'), value: Buffer.alloc(0), lease, create_revision: '1', mod_revision: '1', version: '1' });

describe('the etcd mirror', () => {
  it("takes out an election's candidates (the keys directly below it) without touching others", () => {
    const mirror = new Mirror();
    for (const key of ['e/jobs', 'e/jobs/1a', 'e/jobs/2b', 'e/jobsx/3c', 'e/other/4d', 'e/jobs/1a/deep']) remember(mirror, kv(key));
    mirror.deleteBelow('e/jobs');
    expect([...mirror.keys()].sort()).toEqual(['e/jobs', 'e/jobs/1a/deep', 'e/jobsx/3c', 'e/other/4d']);
    mirror.deleteBelow('e/jobs'); // nothing left below: nothing happens
    expect(mirror.size).toBe(4);
  });

  it('keeps its index through deletes, a key with no lease, set twice and clear', () => {
    const mirror = new Mirror();
    remember(mirror, kv('p/a/1'));
    remember(mirror, kv('p/a/1')); // set again: indexed once
    remember(mirror, kv('p/a/2'));
    remember(mirror, kv('p/a/2', '0')); // no lease any more: out
    expect([...mirror.keys()]).toEqual(['p/a/1']);
    mirror.delete('p/a/1');
    remember(mirror, kv('p/a/3'));
    mirror.deleteBelow('p/a');
    expect(mirror.size).toBe(0);
    remember(mirror, kv('p/b/1'));
    mirror.clear();
    remember(mirror, kv('p/b/2'));
    mirror.deleteBelow('p/b');
    expect(mirror.size).toBe(0);
  });
});

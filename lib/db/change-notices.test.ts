import { describe, expect, it } from 'vitest';
import { parseChangeNotice } from './change-notices';

describe('a NOTIFY payload heard on leasehold_changes', () => {
  const good = { collector: 'c-1', source: 'redis-main', sourceRow: true, leases: ['redis-main:locks:a'], events: ['17', '9223372036854775807'] };

  it('is a notice when Leasehold wrote it', () => {
    expect(parseChangeNotice(JSON.stringify(good))).toEqual(good);
    expect(parseChangeNotice(JSON.stringify({ ...good, leases: null, events: null }))).toMatchObject({ leases: null, events: null });
  });

  it.each([
    ['not JSON', '{'],
    ['empty', ''],
    ['an array', '[]'],
    ['no source', JSON.stringify({ ...good, source: undefined })],
    ['an event id that is no row id', JSON.stringify({ ...good, events: ['abc'] })],
    ['an event id beyond a bigint', JSON.stringify({ ...good, events: ['99999999999999999999'] })],
    ['too many lease ids', JSON.stringify({ ...good, leases: Array.from({ length: 201 }, (_, i) => `l${i}`) })],
    ['leases that are not a list', JSON.stringify({ ...good, leases: 'all' })],
  ])('is dropped when it is %s (anyone who can connect may NOTIFY)', (_what, payload) => {
    expect(parseChangeNotice(payload)).toBeNull();
  });
});

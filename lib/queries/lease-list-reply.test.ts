// The lease list's body around the cached list's bytes, and the 400 for a source there is none
// of (lib/queries/lease-list-reply.ts), without a store.
import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '../api/params';
import { leaseListBody, unknownSource } from './lease-list-reply';

describe('leaseListBody', () => {
  it('the list as it is, the rest around it: JSON', () => {
    const states = { held: 1, free: 1, expired: 0, unknown: 0, stale: 1, problems: 1 };
    const list = { json: Buffer.from('[{"id":"demo/a","remainingMs":12   }]'), total: 3, truncated: true, next: 'eyJzIjoiZGVtbyIsImsiOiJhIn0', counts: new Map([['demo', 3]]), states, position: 'de3c9a76.523' };
    const body = leaseListBody(list, [{ name: 'demo', status: 'up' }]);
    expect(body.toString()).toBe(
      '{"leases":[{"id":"demo/a","remainingMs":12   }],"total":3,"truncated":true,"next":"eyJzIjoiZGVtbyIsImsiOiJhIn0","counts":{"sources":{"demo":3},"states":{"held":1,"free":1,"expired":0,"unknown":0,"stale":1,"problems":1}},"position":"de3c9a76.523","sources":[{"name":"demo","status":"up"}]}',
    );
    expect(JSON.parse(body.toString())).toEqual({
      leases: [{ id: 'demo/a', remainingMs: 12 }],
      total: 3,
      truncated: true,
      next: 'eyJzIjoiZGVtbyIsImsiOiJhIn0',
      counts: { sources: { demo: 3 }, states },
      position: 'de3c9a76.523',
      sources: [{ name: 'demo', status: 'up' }],
    });
    expect(JSON.parse(leaseListBody({ ...list, next: null }, []).toString()).next).toBeNull();
  });
});

describe('unknownSource', () => {
  const sources = (count: number) => Array.from({ length: count }, (_, i) => ({ name: `s${i}` }));

  it('none for no filter or a source there is', () => {
    expect(unknownSource(undefined, [])).toBeNull();
    expect(unknownSource('s1', sources(3))).toBeNull();
  });

  it('a 400 naming the sources there are (20 of them at most), or that there are none', () => {
    const error = unknownSource('nope', sources(2))!;
    expect(error).toBeInstanceOf(InvalidParameterError);
    expect(error.message).toBe('The query parameter "source" must be the name of a source (s0, s1), not "nope".');
    expect(unknownSource('nope', sources(21))!.message).toBe(`The query parameter "source" must be the name of a source (${sources(20).map((s) => s.name).join(', ')}, …), not "nope".`);
    expect(unknownSource('nope', [])!.message).toBe('The query parameter "source" must be the name of a source, and none is configured, not "nope".');
  });
});

import { describe, expect, it } from 'vitest';
import { InvalidLeaseIdError, formatLeaseId, leaseIdFromRawPath, leaseIdFromSegments, parseLeaseId } from '../../lib/domain/lease-id';

describe('lease ids', () => {
  it.each([
    { text: 'redis-main/lock:weekly-digest', source: 'redis-main', key: 'lock:weekly-digest' },
    { text: 'pg/leases/weekly-digest-scheduler', source: 'pg', key: 'leases/weekly-digest-scheduler' },
    { text: 'etcd/election/digest', source: 'etcd', key: 'election/digest' },
    { text: 'pg/advisory/42', source: 'pg', key: 'advisory/42' },
  ])('$text splits at the first slash', ({ text, source, key }) => {
    expect(parseLeaseId(text)).toEqual({ source, key });
    expect(formatLeaseId({ source, key })).toBe(text);
  });

  it.each(['', 'no-slash', '/key-without-source', 'source-without-key/'])('"%s" is rejected', (text) => {
    expect(() => parseLeaseId(text)).toThrow(InvalidLeaseIdError);
  });

  // Next decodes catch-all segments once before handing them over: "pg%2Fleases%2Fjob" in
  // the URL arrives as one segment "pg/leases/job".
  it.each([
    { name: 'one encoded segment, as Next hands it over', segments: ['pg/leases/job'] },
    { name: 'plain segments', segments: ['pg', 'leases', 'job'] },
    { name: 'mixed', segments: ['pg', 'leases/job'] },
  ])('route segments, $name, give the same id', ({ segments }) => {
    expect(leaseIdFromSegments(segments)).toEqual({ source: 'pg', key: 'leases/job' });
  });

  it('keeps characters that needed escaping in keys, and never decodes twice', () => {
    expect(leaseIdFromSegments(['r/lock:a b%c?'])).toEqual({ source: 'r', key: 'lock:a b%c?' });
    expect(leaseIdFromSegments(['r', 'lock%2541'])).toEqual({ source: 'r', key: 'lock%2541' });
  });
});

describe('lease ids from a raw console path', () => {
  it.each([
    ['one encoded segment', '/leases/pg%2Fleases%2Fjob', { source: 'pg', key: 'leases/job' }],
    ['plain segments', '/leases/pg/leases/job', { source: 'pg', key: 'leases/job' }],
    ['a key holding "%", a space and "/" (decoded once, not twice)', `/leases/${encodeURIComponent('r/lock:%41 b/c')}`, { source: 'r', key: 'lock:%41 b/c' }],
    ['a key ending in a slash', `/leases/${encodeURIComponent('etcd/election/')}`, { source: 'etcd', key: 'election/' }],
  ])('%s', (_name, path, expected) => {
    expect(leaseIdFromRawPath(path)).toEqual(expected);
  });

  it.each(['/leases/no-slash', '/leases/r%2F%E0%A4%A', '/leases/%2Fkey'])('"%s" is not a lease id', (path) => {
    expect(() => leaseIdFromRawPath(path)).toThrow(InvalidLeaseIdError);
  });
});

import { describe, expect, it } from 'vitest';
import { isRefusedForContent } from '@/lib/db/observer-writes';

// A write the store refuses for what is in it is one lease's problem (that lease is set
// aside, the others are written); any other failure is the store's, and the batch is retried
// whole: treating an outage as a refusal would drop every lease's events and renewals.
describe('isRefusedForContent', () => {
  it.each([
    ['22003', 'numeric value out of range'],
    ['22008', 'datetime field overflow'],
    ['22P02', 'invalid text representation'],
    ['23505', 'unique violation'],
    ['23514', 'check violation'],
    ['54000', 'program limit exceeded (an index row too large)'],
    ['P0001', 'raised by a trigger'],
  ])('%s (%s) is a refusal of the content', (code) => {
    expect(isRefusedForContent(Object.assign(new Error('x'), { code }))).toBe(true);
    expect(isRefusedForContent(new Error('wrapped', { cause: Object.assign(new Error('x'), { code }) }))).toBe(true);
  });

  it.each([
    ['08006', 'connection failure'],
    ['40P01', 'deadlock'],
    ['40001', 'serialization failure'],
    ['53100', 'disk full'],
    ['57P01', 'admin shutdown'],
    ['57014', 'query cancelled (statement timeout)'],
    ['ECONNREFUSED', 'no store at that address'],
    ['ETIMEDOUT', 'no answer'],
  ])('%s (%s) is the store’s problem', (code) => {
    expect(isRefusedForContent(Object.assign(new Error('x'), { code }))).toBe(false);
  });

  it('errors without a code, and things that are not errors, are the store’s problem', () => {
    expect(isRefusedForContent(new Error('Connection terminated unexpectedly'))).toBe(false);
    expect(isRefusedForContent(null)).toBe(false);
    expect(isRefusedForContent('23505')).toBe(false);
    expect(isRefusedForContent({ code: 23505 })).toBe(false);
  });
});

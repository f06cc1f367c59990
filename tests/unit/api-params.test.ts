// The API's parameter parsers (lib/api/params.ts) against hostile values: each is either a
// value the store can take or an InvalidParameterError (a 400) naming the parameter, never
// something that reaches SQL and fails there (issue 13, point 9).
import { describe, expect, it } from 'vitest';
import {
  InvalidParameterError,
  leaseIdParam,
  MAX_INT64,
  MAX_TIME_MS,
  MIN_TIME_MS,
  parseCursor,
  parseLeaseFilter,
  parseLimit,
  parseSince,
  parseTypes,
  pathId,
} from '../../lib/api/params';
import { InvalidLeaseIdError } from '../../lib/domain/lease-id';

const NOW = Date.parse('2026-12-03T12:00:00Z');
const q = (query: Record<string, string | string[]>) => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) for (const one of [value].flat()) params.append(name, one);
  return params;
};
const LONG = 'x'.repeat(10_240);
// Values every parser must refuse, whatever it parses.
const HOSTILE = ['\u0000', 'a\u0000b', '%00', '\u0007', '\u001b[31m', '\u007f', '\u0085', '\u202eevil', 'NaN', 'Infinity', '-1', '1e3', '0x10', ' 5', '5 ', '１２', '💥', LONG];

/** A value as a test's name shows it: JSON, cut to 40 characters (a 10 kB value is not a name). */
const label = (value: unknown) => {
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 30)}... (${text.length} chars)` : text;
};

/** Runs `parse` and says what it did: the value, or the parameter its 400 names. */
function outcome(parse: () => unknown): { value: unknown } | { refused: string } {
  try {
    return { value: parse() };
  } catch (error) {
    if (error instanceof InvalidParameterError) return { refused: error.parameter };
    throw error;
  }
}

describe('since', () => {
  it.each([
    ['0000-01-01', 'year 0: before what timestamptz holds'],
    ['999999d', '2,700 years back: before year 1'],
    ['-000001-01-01', 'a signed year'],
    ['+275760-09-13T00:00:00Z', "past JS Date's end"],
    ['275760-09-13', ''],
    ['10000-01-01', 'a five-digit year'],
    ['0001-01-01T00:00:00+00:01', 'a minute before year 1 once the offset is applied'],
    ['2026-02-30', 'no such day (a JS Date would make it March 2)'],
    ['2026-02-29T00:00:00Z', 'not a leap year'],
    ['2026-13-01', ''],
    ['2026-12-02T24:00:00Z', ''],
    ['2026-12-02T06:60:00Z', ''],
    ['2026-12-02T06:00:00+24:00', ''],
    ['yesterday', ''],
    ['15x', ''],
    ['1000000d', 'seven digits'],
    ['0x10d', ''],
    ['2026-12-02T06:00:00Z\u0000', ''],
    ...HOSTILE.map((value) => [value, 'hostile'] as [string, string]),
  ].map(([value, why]) => ({ name: `${label(value)}${why ? ` (${why})` : ''}`, value: value! })))('$name is a 400 naming since', ({ value }) => {
    expect(outcome(() => parseSince(q({ since: value }), NOW))).toEqual({ refused: 'since' });
  });

  it.each([
    ['15m', NOW - 15 * 60_000],
    ['7d', NOW - 7 * 86_400_000],
    ['000001s', NOW - 1_000],
    ['2026-12-02T06:00:00Z', Date.parse('2026-12-02T06:00:00Z')],
    ['2026-12-02T06:00:00.123456789Z', Date.parse('2026-12-02T06:00:00.123Z')],
    ['2026-12-02T06:00:00+01:00', Date.parse('2026-12-02T05:00:00Z')],
    ['2026-12-02T06:00:00-0130', Date.parse('2026-12-02T07:30:00Z')],
    ['2026-12-02T06:00', Date.parse('2026-12-02T06:00:00Z')],
    ['2026-12-02', Date.parse('2026-12-02T00:00:00Z')],
    ['2024-02-29', Date.parse('2024-02-29T00:00:00Z')],
    ['0001-01-01', MIN_TIME_MS],
    ['0099-06-01', Date.parse('0099-06-01T00:00:00Z')],
    ['9999-12-31T23:59:59.999Z', MAX_TIME_MS],
  ].map(([value, at]) => ({ name: label(value), value: value as string, at: at as number })))('$name is a time', ({ value, at }) => {
    expect(parseSince(q({ since: value }), NOW)?.getTime()).toBe(at);
  });

  it('a duration that reaches back before year 1 is refused, one that does not is not', () => {
    const days = Math.floor((NOW - MIN_TIME_MS) / 86_400_000);
    expect(parseSince(q({ since: `${days}d` }), NOW)!.getTime()).toBeGreaterThanOrEqual(MIN_TIME_MS);
    expect(outcome(() => parseSince(q({ since: `${days + 1}d` }), NOW))).toEqual({ refused: 'since' });
  });

  it('absent or empty: no bound; given twice: a 400', () => {
    expect(parseSince(q({}), NOW)).toBeUndefined();
    expect(parseSince(q({ since: '' }), NOW)).toBeUndefined();
    expect(outcome(() => parseSince(q({ since: ['1h', '2h'] }), NOW))).toEqual({ refused: 'since' });
  });
});

describe('cursor', () => {
  it.each([
    '9999999999999999999',
    '9223372036854775808',
    '18446744073709551616',
    '99999999999999999999999999',
    '-1',
    '1.5',
    '1e18',
    ...HOSTILE,
  ].map((value) => ({ name: label(value), value })))('$name is a 400 naming cursor', ({ value }) => {
    expect(outcome(() => parseCursor(q({ cursor: value })))).toEqual({ refused: 'cursor' });
  });

  it.each([
    ['0', 0n],
    ['42', 42n],
    ['9223372036854775807', MAX_INT64],
    ['0009223372036854775', 9_223_372_036_854_775n],
  ].map(([value, cursor]) => ({ name: label(value), value: value as string, cursor: cursor as bigint })))('$name is a cursor', ({ value, cursor }) => {
    expect(parseCursor(q({ cursor: value }))).toBe(cursor);
  });
});

describe('limit', () => {
  it.each(['0', '1001', '99999999999999999999', '1.0', '1.5', ...HOSTILE].map((value) => ({ name: label(value), value })))('$name is a 400 naming limit', ({ value }) => {
    expect(outcome(() => parseLimit(q({ limit: value }), 100, 1_000))).toEqual({ refused: 'limit' });
  });

  it('1 to the maximum are limits; none is the default', () => {
    expect(parseLimit(q({ limit: '1' }), 100, 1_000)).toBe(1);
    expect(parseLimit(q({ limit: '1000' }), 100, 1_000)).toBe(1_000);
    expect(parseLimit(q({ limit: '007' }), 100, 1_000)).toBe(7);
    expect(parseLimit(q({}), 100, 1_000)).toBe(100);
    expect(outcome(() => parseLimit(q({ limit: ['1', '2'] }), 100, 1_000))).toEqual({ refused: 'limit' });
  });
});

describe('types', () => {
  it.each(['expired,', 'EXPIRED', 'expired,nope', 'acquired\u0000', ...HOSTILE].map((value) => ({ name: label(value), value })))('$name is a 400 naming types', ({ value }) => {
    expect(outcome(() => parseTypes(q({ types: value })))).toEqual({ refused: 'types' });
  });

  it('a list of known types', () => {
    expect(parseTypes(q({ types: 'expired, acquired' }))).toEqual(['expired', 'acquired']);
  });
});

describe('the lease list filter', () => {
  it.each([
    ['state', 'HELD'],
    ['state', 'held\u0000'],
    ['source', '\u0000'],
    ['source', '../etc'],
    ['source', 'a'.repeat(64)],
    ['source', 'démo'],
    ['q', 'a\u0000b'],
    ['q', 'a\u001bb'],
    ['q', 'x'.repeat(201)],
    ['q', LONG],
    ['limit', '100001'],
    ...HOSTILE.map((value) => ['state', value] as [string, string]),
    ...HOSTILE.filter((value) => !/^[A-Za-z0-9]/.test(value) || value.length > 63).map((value) => ['source', value] as [string, string]),
  ].map(([parameter, value]) => ({ name: `${parameter}=${label(value)}`, parameter: parameter!, value: value! })))('$name is a 400 naming it', ({ parameter, value }) => {
    expect(outcome(() => parseLeaseFilter(q({ [parameter]: value })))).toEqual({ refused: parameter });
  });

  it('text may hold any printable character, bidi and emoji included (they only fail to match)', () => {
    expect(parseLeaseFilter(q({ q: '\u202eevil 💥 ％' })).q).toBe('\u202eevil 💥 ％');
    expect(parseLeaseFilter(q({ source: 'pg-main', state: 'held', limit: '5' }))).toEqual({ source: 'pg-main', state: 'held', q: undefined, limit: 5 });
  });

  it('a parameter given twice is a 400', () => {
    expect(outcome(() => parseLeaseFilter(q({ state: ['held', 'free'] })))).toEqual({ refused: 'state' });
  });

  it("the message names the parameter and shows the value with its control characters escaped, cut short", () => {
    try {
      parseTypes(q({ types: `a\u0000${'b'.repeat(100)}` }));
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toMatch(/^The query parameter "types" must be text without control characters, not "a\\x00b+\.\.\."\.$/);
      expect((error as Error).message).not.toContain('\u0000');
    }
  });
});

describe('lease ids from the path', () => {
  it.each([
    [['demo', 'a\u0000b'], 'U+0000'],
    [['demo/a\u0000'], 'U+0000'],
    [['demo', 'a\u001fb'], 'U+001F'],
    [['demo', 'a\u007f'], 'U+007F'],
    [['demo', 'a\u0085'], 'U+0085'],
    [['demo', 'x'.repeat(10_240)], 'characters long'],
    [['demo'], 'expected'],
    [['', 'key'], 'expected'],
  ].map(([segments, reason]) => ({ name: `${label(segments)} (${reason as string})`, segments: segments as string[], reason: reason as string })))('$name is an invalid lease id', ({ segments, reason }) => {
    expect(() => leaseIdParam(segments)).toThrow(InvalidLeaseIdError);
    expect(() => leaseIdParam(segments)).toThrow(reason);
  });

  it('the message never carries the control character itself', () => {
    expect(() => leaseIdParam(['demo', 'a\u0000b'])).toThrow(/"demo\/a\\x00b" is not a lease id: .*escaped, as \\x00/);
  });

  it.each([
    [['demo', 'pixly.leases', 'weekly-digest'], 'demo/pixly.leases/weekly-digest'],
    [['r/lock:a b%c?'], 'r/lock:a b%c?'],
    [['r', '\u202eevil'], 'r/\u202eevil'],
    [['r', 'a\\x00b'], 'r/a\\x00b'],
    [['r', '💥'.repeat(1000)], `r/${'💥'.repeat(1000)}`],
  ].map(([segments, id]) => ({ name: label(segments), segments: segments as string[], id: id as string })))('$name is an id', ({ segments, id }) => {
    expect(leaseIdParam(segments)).toBe(id);
  });
});

describe('pathId: the {id} of the admin routes', () => {
  const refused = (id: string) => pathId(Promise.resolve({ id })).then(() => null, (error: unknown) => error);
  it.each(['\u0000', 'a\u0000b', '\u001f', '\u007f', '\u0085', '', 'x'.repeat(201)])('%j is a 400 naming the path parameter', async (id) => {
    const error = await refused(id);
    expect(error).toBeInstanceOf(InvalidParameterError);
    expect((error as Error).message).toContain('The path parameter "id" must be');
    // eslint-disable-next-line no-control-regex -- the point
    expect((error as Error).message).not.toMatch(/[\u0000-\u001f]/);
  });
  it.each(['default-missed-renewal', '3f9c2a1e-7d7b-4a4e-9a55-2b1f0c9e7d11', 'e2e-admin', 'x'.repeat(200)])('%s is an id', async (id) => {
    expect(await pathId(Promise.resolve({ id }))).toBe(id);
  });
});

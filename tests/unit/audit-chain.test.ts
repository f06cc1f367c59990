// The audit chain's canonical form and hash (lib/db/audit-chain.ts), the audit query's
// parameters (lib/api/query-schemas.ts auditQuery) and the CSV export (lib/queries/audit.ts).
// The canonical form is pinned: changing it would break every chain already written.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidParameterError, parseQuery } from '../../lib/api/params';
import { auditCsvQuery, auditQuery } from '../../lib/api/query-schemas';
import { auditHash, canonicalAudit, canonicalJson, storableJson, storableToken, type AuditContent } from '../../lib/db/audit-chain';
import type { AuditEntryView } from '../../lib/domain/audit';
import { auditToCsv } from '../../lib/queries/audit';

const entry: AuditContent = {
  id: 42n,
  at: new Date('2026-12-04T10:00:00.123Z'),
  requestId: 'req-1',
  phase: 'done',
  status: 200,
  action: 'force-expire',
  actor: 'alice',
  actorRole: 'operator',
  authMethod: 'password',
  clientAddress: null,
  leaseId: 'pg/leases/weekly-digest',
  reason: 'wedged',
  expectedHolder: 'worker-7',
  expectedToken: 2n ** 130n,
  actualHolder: null,
  actualToken: null,
  previousToken: 2n ** 130n,
  newToken: 2n ** 130n + 1n,
  dryRun: false,
  detail: { zeta: [2, 1], alpha: { b: true, a: null } },
};

const PINNED =
  '{"action":"force-expire","actor":"alice","actorRole":"operator","at":"2026-12-04T10:00:00.123Z","authMethod":"password",' +
  '"detail":{"alpha":{"a":null,"b":true},"zeta":[2,1]},"dryRun":false,"expectedHolder":"worker-7","expectedToken":"1361129467683753853853498429727072845824",' +
  '"id":"42","leaseId":"pg/leases/weekly-digest","newToken":"1361129467683753853853498429727072845825","phase":"done",' +
  '"previousToken":"1361129467683753853853498429727072845824","reason":"wedged","requestId":"req-1","status":200}';

describe('the canonical form', () => {
  it('is sorted JSON without whitespace, null columns left out, tokens and ids as decimal strings', () => {
    expect(canonicalAudit(entry)).toBe(PINNED);
  });

  it('does not depend on the order of the detail keys', () => {
    const reordered = { ...entry, detail: { alpha: { a: null, b: true }, zeta: [2, 1] } };
    expect(canonicalAudit(reordered)).toBe(canonicalAudit(entry));
    expect(canonicalAudit({ ...entry, detail: { zeta: [1, 2], alpha: { a: null, b: true } } })).not.toBe(canonicalAudit(entry)); // arrays keep their order
  });

  it('sorts keys by UTF-16 code units at every depth, numbers as ECMAScript writes them', () => {
    expect(canonicalJson({ b: [{ y: 1, x: 2 }], a: 1e21, '\u{1F600}': 0.1, '\uFFFF': -5, '': 'e' })).toBe('{"":"e","a":1e+21,"b":[{"x":2,"y":1}],"\u{1F600}":0.1,"\uFFFF":-5}');
  });

  it('hashes sha256(prevHash + "\\n" + canonical), with "" before the first entry', () => {
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    expect(auditHash(null, entry)).toBe(sha(`\n${PINNED}`));
    expect(auditHash('ab'.repeat(32), entry)).toBe(sha(`${'ab'.repeat(32)}\n${PINNED}`));
    expect(auditHash(null, entry)).toBe('6f1d02161d11ca8b5e3e2f500ed2ad8a9ff0b262a92928dbec9f6e1637668f91');
    expect(auditHash(null, { ...entry, reason: 'wedged!' })).not.toBe(auditHash(null, entry));
    expect(auditHash(null, { ...entry, at: new Date(entry.at.getTime() + 1) })).not.toBe(auditHash(null, entry));
    expect(auditHash(null, { ...entry, id: 43n })).not.toBe(auditHash(null, entry));
  });
});

describe('what the store keeps', () => {
  it('detail as jsonb gives it back: bigints as strings, undefined dropped, NaN null, lone surrogates replaced', () => {
    const detail = storableJson({ big: 2n ** 70n, gone: undefined, nan: Number.NaN, when: new Date(0), text: 'a\ud800b', list: [undefined, 1] });
    expect(detail).toEqual({ big: '1180591620717411303424', nan: null, when: '1970-01-01T00:00:00.000Z', text: 'a\uFFFDb', list: [null, 1] });
    expect(storableJson(undefined)).toBeNull();
    const proto = storableJson(JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(Object.keys(proto)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses NUL, which the store cannot hold', () => {
    expect(() => storableJson({ a: 'x\u0000' })).toThrow(/NUL/);
  });

  it.each([
    ['a bigint', 2n ** 200n, 2n ** 200n],
    ['a decimal string', '340282366920938463463374607431768211457', 340282366920938463463374607431768211457n],
    ['a safe integer', 7, 7n],
    ['null', null, null],
    ['undefined', undefined, null],
  ])('a token as %s', (_name, value, expected) => {
    expect(storableToken(value, 'token')).toBe(expected);
  });

  it.each([['1e5'], ['1.5'], [' 1'], [2 ** 60], ['9'.repeat(79)]])('refuses the token %s', (value) => {
    expect(() => storableToken(value as string, 'token')).toThrow(/token/);
  });
});

describe('the audit query', () => {
  const parse = (query: string) => parseQuery(auditQuery, new URLSearchParams(query));

  it('reads every filter', () => {
    expect(parse('since=2026-12-01T00:00:00Z&until=2026-12-02&actor=alice&lease=pg%2Fleases%2Fjob&action=force-expire&phase=refused&limit=50&cursor=123')).toEqual({
      since: new Date('2026-12-01T00:00:00Z'),
      until: new Date('2026-12-02T00:00:00Z'),
      actor: 'alice',
      leaseId: 'pg/leases/job',
      action: 'force-expire',
      phase: 'refused',
      limit: 50,
      cursor: 123n,
    });
    expect(parse('')).toEqual({ limit: 100 });
    expect(parseQuery(auditCsvQuery, new URLSearchParams('actor=bob'))).toEqual({ actor: 'bob', limit: 100_000 });
  });

  it.each([
    ['phase=succeeded', 'phase', 'The query parameter "phase" must be one of requested, done, refused, error, not "succeeded".'],
    ['action=DROP%20TABLE', 'action', 'The query parameter "action" must be an action name (lower-case letters, digits and . _ : -), not "DROP TABLE".'],
    ['limit=1001', 'limit', 'The query parameter "limit" must be a whole number from 1 to 1000, not "1001".'],
    ['until=tomorrow', 'until', 'The query parameter "until" must be an ISO time (2026-12-02T06:00:00Z) from year 1 to 9999, or a duration such as 15m, 6h or 7d (1-6 digits), not "tomorrow".'],
    ['actor=a%00', 'actor', 'The query parameter "actor" must be text without control characters, not "a\\x00".'],
  ])('refuses %s', (query, parameter, message) => {
    try {
      parse(query);
      throw new Error('not refused');
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidParameterError);
      expect({ parameter: (error as InvalidParameterError).parameter, message: (error as Error).message }).toEqual({ parameter, message });
    }
  });
});

describe('the CSV export', () => {
  const view: AuditEntryView = {
    id: '7',
    at: '2026-12-04T10:00:00.123Z',
    requestId: 'req-1',
    phase: 'refused',
    status: 409,
    action: 'force-expire',
    actor: '=HYPERLINK("http://evil","x")',
    actorRole: 'operator',
    authMethod: 'token',
    clientAddress: '2001:db8::1',
    leaseId: 'redis/lock:a,b',
    reason: 'said "no"\r\nthen left',
    expectedHolder: '+1+2',
    expectedToken: '-5',
    actualHolder: '@SUM(A1)',
    actualToken: '340282366920938463463374607431768211457',
    previousToken: null,
    newToken: null,
    dryRun: true,
    detail: { note: '-1', list: [1, 2] },
    prevHash: null,
    hash: 'f'.repeat(64),
  };

  it('quotes by RFC 4180 and defuses cells a spreadsheet would run as formulas', () => {
    const header =
      'id,at,request_id,phase,status,action,actor,actor_role,auth_method,client_address,lease,reason,expected_holder,expected_token,actual_holder,actual_token,previous_token,new_token,dry_run,detail,prev_hash,hash';
    const row =
      `7,2026-12-04T10:00:00.123Z,req-1,refused,409,force-expire,"'=HYPERLINK(""http://evil"",""x"")",operator,token,2001:db8::1,"redis/lock:a,b",` +
      `"said ""no""\r\nthen left",'+1+2,-5,'@SUM(A1),340282366920938463463374607431768211457,,,true,"{""note"":""-1"",""list"":[1,2]}",,${'f'.repeat(64)}`;
    expect(auditToCsv([view])).toBe(`${header}\r\n${row}\r\n`);
    expect(auditToCsv([])).toBe(`${header}\r\n`);
  });
});

// Alert messages for the format tests: a plain one, and one built to break things.
import { AlertEvaluator } from '../../../domain/alert-rules';
import type { AlertMessage, AlertView } from '../../../domain/alert-types';
import type { FormatContext } from './types';

export const FINGERPRINT = '0123456789abcdef0123456789abcdef';

export function alertView(overrides: Partial<AlertView> = {}): AlertView {
  return {
    id: 'alr_01J9Z8',
    fingerprint: FINGERPRINT,
    rule: { id: 'rul_1', name: 'payments leader renews late', type: 'late_renewal' },
    severity: 'warning',
    status: 'firing',
    source: 'redis-main',
    leaseId: 'redis-main:locks:payments',
    leaseKey: 'locks:payments',
    holder: 'payments-7f9c',
    previousHolder: null,
    token: '42',
    previousToken: '41',
    ttlMs: 10_000,
    marginMs: 850,
    gapMs: null,
    summary: 'locks:payments was renewed with 850 ms left (payments-7f9c)',
    startsAt: '2026-03-01T12:00:00.000Z',
    endsAt: null,
    occurrences: 1,
    detail: null,
    ...overrides,
  };
}

export function message(overrides: Partial<AlertView> = {}, type: AlertMessage['type'] = 'alert.firing', link: string | null = 'https://leasehold.example/leases/redis-main%3Alocks%3Apayments'): AlertMessage {
  return { type, at: '2026-03-01T12:00:01.000Z', alert: alertView(overrides), link };
}

/**
 * A failover alert as the rules make it (lib/domain/alert-rules/), summary included, for a
 * key and holders given as exact text: what the formats are really sent.
 */
export function evaluatedMessage({ key = 'locks:payments', holder = 'payments-7f9c', previousHolder = 'payments-1a2b' } = {}): AlertMessage {
  const rule = { id: 'rul_2', name: 'payments failover', type: 'failover', severity: 'warning', scope: { kind: 'all' }, params: {}, enabled: true } as const;
  const lease = { id: `redis-main/${key}`, source: 'redis-main', key, kind: 'lock', state: 'held', stale: false, holder, lastHolder: previousHolder, token: '43', lastToken: '42', ttlMs: 10_000, candidates: 0 } as const;
  const change = { type: 'taken_over', holder, previousHolder, token: '43', previousToken: '42', gapMs: 1200, detail: null } as const;
  const [decision] = new AlertEvaluator([rule]).apply({ type: 'change', lease, change }, 0);
  if (decision?.op !== 'raise') throw new Error('the failover rule raised nothing');
  return message({
    rule: { id: rule.id, name: rule.name, type: rule.type },
    leaseId: decision.subject.leaseId,
    leaseKey: decision.subject.leaseKey,
    ...decision.facts,
    summary: decision.summary,
  });
}

export function resolved(overrides: Partial<AlertView> = {}): AlertMessage {
  return message({ status: 'resolved', endsAt: '2026-03-01T12:05:00.000Z', ...overrides }, 'alert.resolved');
}

/** Every field at its worst: a 10 kB key, a binary holder, a token past 2^64, nulls, markup. */
export function hostile(): AlertMessage {
  const binary = Array.from({ length: 600 }, (_, i) => String.fromCharCode(i % 256)).join('') + '\ud800' + '\u202e<!channel>&';
  return {
    type: 'alert.firing',
    at: '2026-03-01T12:00:01.000Z',
    link: `https://leasehold.example/leases/${'x'.repeat(4000)}`,
    alert: alertView({
      rule: { id: 'rul_<script>', name: `<!here> ${'r'.repeat(3000)} & "quoted"`, type: 'token_regression' },
      severity: 'critical',
      source: `src\n${'s'.repeat(2000)}\u0000`,
      leaseId: `id:${'k'.repeat(10_240)}`,
      leaseKey: `<@U123> ${'k'.repeat(10_240)}\udc00`,
      holder: binary,
      previousHolder: binary,
      token: (2n ** 70n).toString(),
      previousToken: (2n ** 70n + 1n).toString(),
      ttlMs: null,
      marginMs: null,
      gapMs: null,
      summary: `${'<b>&amp;'.repeat(2000)}\u0007`,
      occurrences: 123_456,
      detail: { big: 'd'.repeat(100_000), counter: 2n ** 70n, nested: { a: [1, null, '\ud800'] } },
    }),
  };
}

export const CTX: FormatContext = {
  endpointUrl: 'https://hooks.example/services/T000/B000/XXXX',
  endpointName: 'ops',
  routingKey: 'R0123456789abcdef0123456789abcde',
  resendIntervalMs: 300_000,
  now: new Date('2026-03-01T12:00:02.000Z'),
};

/** True when the text has a UTF-16 surrogate without its pair: not encodable as UTF-8. */
export function hasLoneSurrogate(text: string): boolean {
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

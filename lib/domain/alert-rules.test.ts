import { describe, expect, it } from 'vitest';
import { AlertEvaluator, type AlertDecision, type AlertRule, type ChangeFacts, type LeaseFacts } from './alert-rules';
import type { AlertRuleType } from './alert-types';

const rule = (type: AlertRuleType, over: Partial<AlertRule> = {}): AlertRule => ({ id: `r-${type}`, name: type, type, severity: 'warning', scope: { kind: 'all' }, params: {}, enabled: true, ...over });
const lease = (over: Partial<LeaseFacts> = {}): LeaseFacts => ({
  id: 'pg/leases/digest',
  source: 'pg',
  key: 'leases/digest',
  kind: 'lock',
  state: 'held',
  stale: false,
  holder: 'a',
  lastHolder: null,
  token: '7',
  lastToken: null,
  ttlMs: 10_000,
  candidates: 0,
  ...over,
});
const change = (type: ChangeFacts['type'], over: Partial<ChangeFacts> = {}): ChangeFacts => ({ type, holder: null, previousHolder: null, token: null, previousToken: null, gapMs: null, detail: null, ...over });
const summary = (d: AlertDecision | undefined) => (d?.op === 'raise' ? d.summary : '');
const ops = (decisions: AlertDecision[]) => decisions.map((d) => `${d.op} ${d.rule.type} ${d.subject.leaseId ?? d.subject.source}`);

describe('AlertEvaluator', () => {
  it('raises missed_renewal on an expiry, and clears it when the lease is held again, with a failover and its gap', () => {
    const e = new AlertEvaluator([rule('missed_renewal'), rule('failover')]);
    const expired = e.apply({ type: 'change', lease: lease({ state: 'expired', holder: null, lastHolder: 'a' }), change: change('expired', { previousHolder: 'a', previousToken: '7' }) }, 1000);
    expect(ops(expired)).toEqual(['raise missed_renewal pg/leases/digest']);
    expect(expired[0]).toMatchObject({ facts: { previousHolder: 'a', previousToken: '7' }, resolveAfterMs: 900_000 });
    const acquired = e.apply({ type: 'change', lease: lease({ holder: 'b', token: '8' }), change: change('acquired', { holder: 'b', previousHolder: 'a', token: '8', previousToken: '7', gapMs: 1200 }) }, 2200);
    expect(ops(acquired)).toEqual(['clear missed_renewal pg/leases/digest', 'raise failover pg/leases/digest']);
    expect(acquired[1]).toMatchObject({ facts: { gapMs: 1200, holder: 'b', previousHolder: 'a' }, resolveAfterMs: 300_000 });
    // The new holder renews: the failover is over; nothing else is open to clear.
    expect(ops(e.apply({ type: 'renewal', lease: lease({ holder: 'b' }), marginMs: 7000, intervalMs: 3000, ttlMs: 10_000 }, 5000))).toEqual(['clear failover pg/leases/digest']);
  });

  it('does not take a first sight or a re-acquisition by the same holder for a failover', () => {
    const e = new AlertEvaluator([rule('failover')]);
    expect(e.apply({ type: 'change', lease: lease(), change: change('acquired', { holder: 'a', detail: { firstSeen: true } }) }, 0)).toEqual([]);
    expect(e.apply({ type: 'change', lease: lease(), change: change('acquired', { holder: 'a', previousHolder: 'a' }) }, 0)).toEqual([]);
    expect(ops(e.apply({ type: 'change', lease: lease(), change: change('taken_over', { holder: 'b', previousHolder: 'a', gapMs: 0 }) }, 0))).toEqual(['raise failover pg/leases/digest']);
  });

  it.each([
    { margin: 1999, raised: true },
    { margin: 2000, raised: false },
    { margin: 9000, raised: false },
  ])('late_renewal at 20 %: margin $margin ms of 10 s raised=$raised', ({ margin, raised }) => {
    const e = new AlertEvaluator([rule('late_renewal')]);
    const out = e.apply({ type: 'renewal', lease: lease(), marginMs: margin, intervalMs: 8000, ttlMs: 10_000 }, 0);
    expect(out.length).toBe(raised ? 1 : 0);
    if (raised) expect(out[0]).toMatchObject({ op: 'raise', facts: { marginMs: margin, ttlMs: 10_000 } });
  });

  it('does not call a renewal late when the reading may be off by enough to make it in time (etcd counts whole seconds)', () => {
    const e = new AlertEvaluator([rule('late_renewal')]);
    expect(e.apply({ type: 'renewal', lease: lease(), marginMs: 1500, intervalMs: 8500, ttlMs: 10_000, uncertaintyMs: 1000 }, 0)).toEqual([]);
    expect(ops(e.apply({ type: 'renewal', lease: lease(), marginMs: 900, intervalMs: 9100, ttlMs: 10_000, uncertaintyMs: 1000 }, 1))).toEqual(['raise late_renewal pg/leases/digest']);
  });

  it('clears late_renewal at the next renewal in time, and honours its own marginPercent', () => {
    const e = new AlertEvaluator([rule('late_renewal', { params: { marginPercent: 50 } })]);
    expect(ops(e.apply({ type: 'renewal', lease: lease(), marginMs: 4000, intervalMs: 6000, ttlMs: 10_000 }, 0))).toEqual(['raise late_renewal pg/leases/digest']);
    expect(ops(e.apply({ type: 'renewal', lease: lease(), marginMs: 6000, intervalMs: 4000, ttlMs: 10_000 }, 1))).toEqual(['clear late_renewal pg/leases/digest']);
    expect(e.apply({ type: 'renewal', lease: lease(), marginMs: 6000, intervalMs: 4000, ttlMs: 10_000 }, 2)).toEqual([]);
  });

  it('makes a token regression critical whatever the rule says', () => {
    const e = new AlertEvaluator([rule('token_regression', { severity: 'info' })]);
    const out = e.apply({ type: 'change', lease: lease(), change: change('token_regression', { holder: 'b', token: '3', previousToken: '7' }) }, 0);
    expect(out).toMatchObject([{ op: 'raise', severity: 'critical', facts: { token: '3', previousToken: '7' } }]);
  });

  it('raises source_down once after afterMs, and clears it when the source answers', () => {
    const e = new AlertEvaluator([rule('source_down', { params: { afterMs: 5000 } })]);
    expect(e.apply({ type: 'source', source: 'pg', up: false, reason: 'ECONNREFUSED' }, 1000)).toEqual([]);
    expect(e.tick(5999)).toEqual([]);
    const fired = e.tick(6000);
    expect(ops(fired)).toEqual(['raise source_down pg']);
    expect(summary(fired[0])).toContain('ECONNREFUSED');
    expect(e.tick(9000)).toEqual([]);
    // Down again while down does not restart the clock.
    expect(e.apply({ type: 'source', source: 'pg', up: false, reason: 'x' }, 9500)).toEqual([]);
    expect(ops(e.apply({ type: 'source', source: 'pg', up: true, reason: null }, 10_000))).toEqual(['clear source_down pg']);
    expect(e.apply({ type: 'source', source: 'pg', up: true, reason: null }, 10_001)).toEqual([]);
  });

  it('raises leaderless for an election without a leader, not for a stale one, and for locks only when asked', () => {
    const election = lease({ id: 'etcd/election/x', source: 'etcd', kind: 'election', state: 'free', holder: null, lastHolder: 'a', candidates: 2 });
    const lock = lease({ id: 'pg/leases/x', state: 'expired', holder: null, lastHolder: 'a' });
    const e = new AlertEvaluator([rule('leaderless', { params: { afterMs: 1000 } })]);
    e.apply({ type: 'seen', lease: election }, 0);
    e.apply({ type: 'seen', lease: lock }, 0);
    expect(ops(e.tick(999))).toEqual([]);
    expect(ops(e.tick(1000))).toEqual(['raise leaderless etcd/election/x']);
    expect(e.tick(2000)).toEqual([]);
    expect(ops(e.apply({ type: 'seen', lease: { ...election, state: 'held', holder: 'b' } }, 2500))).toEqual(['clear leaderless etcd/election/x']);
    // A stale lease is not judged: its source cannot be read, so nothing is known.
    const stale = new AlertEvaluator([rule('leaderless', { params: { afterMs: 1000 } })]);
    stale.apply({ type: 'seen', lease: { ...election, stale: true } }, 0);
    expect(stale.tick(5000)).toEqual([]);
    const locks = new AlertEvaluator([rule('leaderless', { params: { afterMs: 1000, includeLocks: true } })]);
    locks.apply({ type: 'seen', lease: lock }, 0);
    expect(ops(locks.tick(1000))).toEqual(['raise leaderless pg/leases/x']);
  });

  it('raises flapping above N changes within the window, and clears it when they fall out of it', () => {
    const e = new AlertEvaluator([rule('flapping', { params: { changes: 3, windowMs: 10_000 } })]);
    const hand = (at: number, to: string) => e.apply({ type: 'change', lease: lease({ holder: to }), change: change('taken_over', { holder: to, previousHolder: 'x' }) }, at);
    expect([...hand(0, 'a'), ...hand(1000, 'b'), ...hand(2000, 'c')]).toEqual([]);
    expect(ops(hand(3000, 'd'))).toEqual(['raise flapping pg/leases/digest']);
    expect(e.tick(9000)).toEqual([]);
    expect(ops(e.tick(10_001))).toEqual(['clear flapping pg/leases/digest']);
  });

  it('raises held_too_long for one holder, and starts again for the next', () => {
    const e = new AlertEvaluator([rule('held_too_long', { params: { afterMs: 60_000 } })]);
    e.apply({ type: 'seen', lease: lease() }, 0);
    e.apply({ type: 'seen', lease: lease() }, 30_000);
    expect(ops(e.tick(60_000))).toEqual(['raise held_too_long pg/leases/digest']);
    expect(ops(e.apply({ type: 'seen', lease: lease({ holder: 'b', token: '8' }) }, 61_000))).toEqual(['clear held_too_long pg/leases/digest']);
    expect(e.tick(100_000)).toEqual([]);
    expect(ops(e.tick(121_000))).toEqual(['raise held_too_long pg/leases/digest']);
  });

  it('raises force_action with who, why and the tokens, resolved by itself later', () => {
    const e = new AlertEvaluator([rule('force_action')]);
    const out = e.apply({ type: 'forced', lease: lease(), action: 'force_expired', actor: 'alice', reason: 'stuck since the deploy', previousToken: '7', newToken: '8', auditId: '42' }, 0);
    expect(out).toMatchObject([{ op: 'raise', resolveAfterMs: 300_000, facts: { previousToken: '7', token: '8', detail: { actor: 'alice', auditId: '42' } } }]);
    expect(summary(out[0])).toContain('force-expired by alice');
  });

  it('keeps to each rule its scope, and ignores disabled rules', () => {
    const e = new AlertEvaluator([
      rule('missed_renewal', { id: 'only-redis', scope: { kind: 'source', source: 'redis' } }),
      rule('missed_renewal', { id: 'digest-glob', scope: { kind: 'lease', pattern: 'pg/leases/dig*' } }),
      rule('missed_renewal', { id: 'off', enabled: false }),
    ]);
    const out = e.apply({ type: 'change', lease: lease({ state: 'expired' }), change: change('expired', { previousHolder: 'a' }) }, 0);
    expect(out.map((d) => d.rule.id)).toEqual(['digest-glob']);
    const other = e.apply({ type: 'change', lease: lease({ id: 'pg/leases/other', state: 'expired' }), change: change('expired', { previousHolder: 'a' }) }, 0);
    expect(other).toEqual([]);
  });

  // Keys, lease ids and holders reach the evaluator as exact text (display.ts): `ctl\x00` is
  // the holder whose raw value ended in a NUL byte, as the API shows it.
  it.each([
    {
      name: 'missed_renewal: the previous holder',
      rules: [rule('missed_renewal')],
      feed: (e: AlertEvaluator) => e.apply({ type: 'change', lease: lease({ state: 'expired', holder: null }), change: change('expired', { previousHolder: 'ctl\\x00', previousToken: '7' }) }, 0),
      shows: 'pg/leases/digest: ctl\\x00 missed its renewal',
    },
    {
      name: 'failover: both holders',
      rules: [rule('failover')],
      feed: (e: AlertEvaluator) => e.apply({ type: 'change', lease: lease({ holder: 'ctl\\x00' }), change: change('taken_over', { holder: 'ctl\\x00', previousHolder: 'tab\\x09bidi\\u202e', gapMs: 0 }) }, 0),
      shows: 'tab\\x09bidi\\u202e → ctl\\x00',
    },
    {
      name: 'token_regression: the holder',
      rules: [rule('token_regression')],
      feed: (e: AlertEvaluator) => e.apply({ type: 'change', lease: lease(), change: change('token_regression', { holder: 'ctl\\x00', token: '3', previousToken: '7' }) }, 0),
      shows: '(holder ctl\\x00)',
    },
    {
      name: 'late_renewal: the holder',
      rules: [rule('late_renewal')],
      feed: (e: AlertEvaluator) => e.apply({ type: 'renewal', lease: lease({ holder: 'ctl\\x00' }), marginMs: 500, intervalMs: 9500, ttlMs: 10_000 }, 0),
      shows: 'pg/leases/digest: ctl\\x00 renewed with 500 ms left',
    },
    {
      name: 'held_too_long: the holder',
      rules: [rule('held_too_long', { params: { afterMs: 1000 } })],
      feed: (e: AlertEvaluator) => {
        e.apply({ type: 'seen', lease: lease({ holder: 'ctl\\x00' }) }, 0);
        return e.tick(1000);
      },
      shows: 'held by ctl\\x00 for',
    },
    {
      name: 'leaderless: a lease id with escapes in its key',
      rules: [rule('leaderless', { params: { afterMs: 1000 } })],
      feed: (e: AlertEvaluator) => {
        e.apply({ type: 'seen', lease: lease({ id: 'etcd/election\\u202e\\\\x', kind: 'election', state: 'free', holder: null, lastHolder: 'a', candidates: 1 }) }, 0);
        return e.tick(1000);
      },
      shows: 'etcd/election\\u202e\\\\x: election with 1 candidate',
    },
    {
      // People's text is not exact text: its backslashes are their own (a Windows domain
      // account, a path), so they are not doubled either; a line break becomes a space and a
      // bidi override is made visible.
      name: 'force_action: the actor and the reason people typed',
      rules: [rule('force_action')],
      feed: (e: AlertEvaluator) => e.apply({ type: 'forced', lease: lease(), action: 'force_released', actor: 'CORP\\alice', reason: 'job stuck in C:\\jobs\\x\r\nsee \u202eticket', previousToken: '7', newToken: '8', auditId: '42' }, 0),
      shows: 'force-released by CORP\\alice (token 7 → 8): job stuck in C:\\jobs\\x see \\u202eticket',
    },
    {
      // A source's reason is an error message, which quotes values as they are displayed already.
      name: 'source_down: the reason, already display text',
      rules: [rule('source_down', { params: { afterMs: 1000 } })],
      feed: (e: AlertEvaluator) => {
        e.apply({ type: 'source', source: 'redis', up: false, reason: 'the fence counter holds "ab\\x00", not a number' }, 0);
        return e.tick(1000);
      },
      shows: ': the fence counter holds "ab\\x00", not a number',
    },
  ])('shows exact text as it is, escaped once: $name', ({ rules, feed, shows }) => {
    const out = feed(new AlertEvaluator(rules));
    expect(out.map((d) => d.op)).toEqual(['raise']);
    expect(summary(out[0])).toContain(shows);
    // A doubled backslash appears only where the text had one (the lease id case).
    expect(summary(out[0])).not.toMatch(/\\\\(?:x[0-9a-f]{2}|u[0-9a-f]{4})/);
  });

  it('keeps the facts exact: the previous holder is carried as it came, not escaped', () => {
    const e = new AlertEvaluator([rule('failover')]);
    const [out] = e.apply({ type: 'change', lease: lease({ holder: 'ctl\\x00' }), change: change('taken_over', { holder: 'ctl\\x00', previousHolder: 'a\\\\b', gapMs: 0 }) }, 0);
    expect(out).toMatchObject({ facts: { holder: 'ctl\\x00', previousHolder: 'a\\\\b' } });
  });

  it('cuts a long exact key in a summary between escapes, and marks the cut', () => {
    const e = new AlertEvaluator([rule('missed_renewal')]);
    const [out] = e.apply({ type: 'change', lease: lease({ id: `pg/${'\\x00'.repeat(2_560)}`, state: 'expired' }), change: change('expired', { previousHolder: 'a' }) }, 0);
    expect(summary(out)).toMatch(/^pg\/(?:\\x00)+…: a missed its renewal/);
    expect(summary(out).length).toBeLessThan(200);
  });

  it('keeps hostile holders and keys short in summaries', () => {
    const e = new AlertEvaluator([rule('missed_renewal')]);
    const huge = 'k'.repeat(10_000);
    const [out] = e.apply({ type: 'change', lease: lease({ id: `pg/${huge}`, state: 'expired' }), change: change('expired', { previousHolder: '\u0000\u001b[31m'.repeat(500) }) }, 0);
    expect(summary(out).length).toBeLessThan(400);
    expect(summary(out)).not.toContain('\u001b');
  });
});

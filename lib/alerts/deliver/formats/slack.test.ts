import { describe, expect, it } from 'vitest';
import { buildSlack, mrkdwn } from './slack';
import { CTX, evaluatedMessage, hasLoneSurrogate, hostile, message, resolved } from './test-fixtures';

type Text = { type: string; text: string; emoji?: boolean };
type Block = { type: string; text?: Text; fields?: Text[]; elements?: (Text & { url?: string })[] };
type Slack = { text: string; mrkdwn?: boolean; blocks: Block[] };

const build = (msg = message()) => JSON.parse(buildSlack(msg, CTX).body) as Slack;

/** Every text object in the message, with the limit Block Kit puts on it. */
function texts(slack: Slack): { where: string; type: string; text: string; max: number }[] {
  const out = [{ where: 'text', type: 'mrkdwn', text: slack.text, max: 3000 }];
  for (const block of slack.blocks) {
    if (block.type === 'header') out.push({ where: 'header', type: block.text!.type, text: block.text!.text, max: 150 });
    if (block.type === 'section' && block.text) out.push({ where: 'section', type: block.text.type, text: block.text.text, max: 3000 });
    for (const field of block.fields ?? []) out.push({ where: 'field', type: field.type, text: field.text, max: 2000 });
    for (const element of block.elements ?? []) {
      if (element.type === 'button') out.push({ where: 'button', type: 'plain_text', text: (element.text as unknown as Text).text, max: 75 });
      else out.push({ where: 'context', type: element.type, text: element.text, max: 3000 });
    }
  }
  return out;
}

describe('slack format', () => {
  it('is Block Kit: header, summary, the facts, context, and a button to the console', () => {
    const slack = build();
    expect(slack.blocks.map((b) => b.type)).toEqual(['header', 'section', 'section', 'context', 'actions']);
    expect(slack.blocks[0]!.text).toEqual({ type: 'plain_text', text: '🟠 WARNING · payments leader renews late', emoji: true });
    expect(slack.blocks[1]!.text).toEqual({ type: 'plain_text', text: 'locks:payments was renewed with 850 ms left (payments-7f9c)', emoji: false });
    expect(slack.blocks[2]!.fields).toEqual(
      [
        'Lease\nlocks:payments',
        'Holder\npayments-7f9c',
        'Token\n42',
        'Margin\n850 ms',
        'Gap\n—',
        'Source\nredis-main',
      ].map((text) => ({ type: 'plain_text', text, emoji: false })),
    );
    expect(slack.blocks[3]!.elements![0]).toEqual({ type: 'plain_text', text: 'late_renewal · firing since 2026-03-01T12:00:00.000Z · via ops', emoji: false });
    expect(slack.blocks[4]!.elements![0]).toMatchObject({ type: 'button', url: 'https://leasehold.example/leases/redis-main%3Alocks%3Apayments' });
    expect(slack.text).toBe('🟠 WARNING · payments leader renews late: locks:payments was renewed with 850 ms left (payments-7f9c)');
    expect(slack.mrkdwn).toBe(false);
  });

  it('says resolved, and test, in the header', () => {
    expect(build(resolved()).blocks[0]!.text!.text).toBe('✅ RESOLVED · payments leader renews late');
    expect(build(resolved()).blocks[3]!.elements![0]!.text).toContain('resolved 2026-03-01T12:05:00.000Z');
    expect(build(message({ severity: 'critical' })).blocks[0]!.text!.text).toMatch(/^🔴 CRITICAL/);
    expect(build(message({}, 'alert.test')).blocks[0]!.text!.text).toMatch(/^🧪 TEST/);
  });

  it('shows a console path that is not absolute instead of making it a button', () => {
    const slack = build(message({}, 'alert.firing', '/leases/redis-main%3Alocks%3Apayments'));
    expect(slack.blocks.map((b) => b.type)).not.toContain('actions');
    expect(slack.blocks[3]!.elements![0]!.text).toContain('/leases/redis-main%3Alocks%3Apayments');
    expect(build(message({}, 'alert.firing', null)).blocks.map((b) => b.type)).not.toContain('actions');
  });

  // mrkdwn has escapes for &, < and > only: *, _, ~ and ` in a key or holder would format it.
  // Backend text goes in plain_text, which Slack shows as it is.
  const MARKUP = '*bold* _it_ ~strike~ `code` <!channel> &amp; :lock:';
  it.each([
    { name: 'a holder', over: { holder: MARKUP, summary: `locks:payments was renewed with 850 ms left (${MARKUP})` } },
    { name: 'a key', over: { leaseKey: MARKUP, summary: `${MARKUP} was renewed with 850 ms left (payments-7f9c)` } },
    { name: 'a previous holder in a summary', over: { summary: `redis-main/locks:payments: ${MARKUP} → payments-7f9c` } },
  ])('shows mrkdwn, mentions and links in $name literally', ({ over }) => {
    const slack = build(message(over));
    const carrying = texts(slack).filter(({ text }) => text.includes('bold'));
    expect(carrying.map(({ where }) => where)).toEqual(expect.arrayContaining(['text', 'section']));
    for (const { where, type, text } of carrying) {
      if (where === 'text') continue;
      expect(type, where).toBe('plain_text');
      expect(text, where).toContain(MARKUP);
    }
    // No text object in the blocks is mrkdwn, and none asks for :emoji: codes to be drawn.
    expect(texts(slack).filter(({ where, type }) => where !== 'text' && type === 'mrkdwn')).toEqual([]);
    for (const block of slack.blocks.slice(1)) for (const text of [block.text, ...(block.fields ?? []), ...(block.elements ?? [])]) if (text?.type === 'plain_text') expect(text.emoji).toBe(false);
    // The notification text is mrkdwn: formatting is off for it, and <!channel> is no mention.
    expect(slack.mrkdwn).toBe(false);
    expect(slack.text).not.toMatch(/[<>]/);
    expect(slack.text).toContain('&lt;!channel&gt; &amp;amp;');
  });

  it('shows a holder whose exact text is ctl\\x00 as it is, once', () => {
    const slack = build(evaluatedMessage({ holder: 'ctl\\x00' }));
    expect(slack.blocks[1]!.text!.text).toBe('redis-main/locks:payments: payments-1a2b → ctl\\x00, 1200 ms without a holder (token 42 → 43)');
    expect(slack.blocks[2]!.fields![1]).toEqual({ type: 'plain_text', text: 'Holder\nctl\\x00', emoji: false });
    expect(slack.text).toContain('→ ctl\\x00,');
  });

  it('cuts a 10 kB key within every limit, and marks the cut', () => {
    const slack = build(evaluatedMessage({ key: `${'k'.repeat(10_240)}*_~` }));
    const lease = slack.blocks[2]!.fields![0]!.text;
    expect(lease).toMatch(/^Lease\nk+…$/);
    expect(lease.length).toBeLessThanOrEqual(2000);
    expect(slack.blocks[1]!.text!.text).toMatch(/^redis-main\/k+…: payments-1a2b → payments-7f9c/);
    for (const { where, text, max } of texts(slack)) expect(text.length, where).toBeLessThanOrEqual(max);
  });

  it('keeps hostile input within every Block Kit limit, escaped and encodable', () => {
    const body = buildSlack(hostile(), CTX).body;
    const slack = JSON.parse(body) as Slack;
    expect(hasLoneSurrogate(body)).toBe(false);
    expect(slack.blocks.length).toBeLessThanOrEqual(50);
    for (const block of slack.blocks) expect((block.fields ?? []).length).toBeLessThanOrEqual(10);
    for (const { where, type, text, max } of texts(slack)) {
      expect(text.length, where).toBeLessThanOrEqual(max);
      expect(text.length, where).toBeGreaterThan(0);
      if (type === 'mrkdwn') expect(text, where).not.toMatch(/[<>]|&(?!amp;|lt;|gt;)/);
      // eslint-disable-next-line no-control-regex -- checking that none is left
      expect(text, where).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u202e]/);
    }
    // The 4000-character link is past a button's 3000: no button, the path is shown (cut).
    expect(slack.blocks.map((b) => b.type)).not.toContain('actions');
  });

  it('cuts escaped text without leaving half an entity', () => {
    expect(mrkdwn('&&&&&&&&&&', 8)).toBe('&amp;…');
    expect(mrkdwn('a<b', 100)).toBe('a&lt;b');
    expect(mrkdwn('🔒🔒🔒🔒', 4)).toBe('🔒…');
  });
});

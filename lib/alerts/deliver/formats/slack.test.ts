import { describe, expect, it } from 'vitest';
import { buildSlack, mrkdwn } from './slack';
import { CTX, hasLoneSurrogate, hostile, message, resolved } from './test-fixtures';

type Text = { type: string; text: string };
type Block = { type: string; text?: Text; fields?: Text[]; elements?: (Text & { url?: string })[] };
type Slack = { text: string; blocks: Block[] };

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
    expect(slack.blocks[1]!.text!.text).toBe('locks:payments was renewed with 850 ms left (payments-7f9c)');
    expect(slack.blocks[2]!.fields!.map((f) => f.text)).toEqual([
      '*Lease*\nlocks:payments',
      '*Holder*\npayments-7f9c',
      '*Token*\n42',
      '*Margin*\n850 ms',
      '*Gap*\n—',
      '*Source*\nredis-main',
    ]);
    expect(slack.blocks[3]!.elements![0]!.text).toBe('late_renewal · firing since 2026-03-01T12:00:00.000Z · via ops');
    expect(slack.blocks[4]!.elements![0]).toMatchObject({ type: 'button', url: 'https://leasehold.example/leases/redis-main%3Alocks%3Apayments' });
    expect(slack.text).toBe('🟠 WARNING · payments leader renews late: locks:payments was renewed with 850 ms left (payments-7f9c)');
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

  it('escapes &, < and > in backend text, so no <!channel> or link can be smuggled in', () => {
    const slack = build(message({ leaseKey: '<!channel> & <https://evil|click>', holder: 'a>b', summary: '<@U123> took it' }));
    for (const { type, text } of texts(slack)) if (type === 'mrkdwn') expect(text).not.toMatch(/[<>]/);
    expect(slack.blocks[2]!.fields![0]!.text).toBe('*Lease*\n&lt;!channel&gt; &amp; &lt;https://evil|click&gt;');
    expect(slack.blocks[1]!.text!.text).toBe('&lt;@U123&gt; took it');
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

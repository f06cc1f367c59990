// Keys and holders reach the formats as exact text (lib/domain/display.ts), escaped once
// already: every format carries that text as it is (JSON's own escaping aside), cut where the
// receiver needs it, never between the parts of an escape.
import { describe, expect, it } from 'vitest';
import { buildRequest, type WebhookFormat } from './index';
import { CTX, evaluatedMessage } from './test-fixtures';

type Payload = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- each format's own JSON

const FORMATS: { format: WebhookFormat; summary: (body: Payload) => string; holder: (body: Payload) => string }[] = [
  { format: 'native', summary: (b) => b.alert.summary, holder: (b) => b.alert.holder },
  { format: 'slack', summary: (b) => b.blocks[1].text.text, holder: (b) => b.blocks[2].fields[1].text },
  { format: 'pagerduty', summary: (b) => b.payload.summary, holder: (b) => b.payload.custom_details.holder },
  { format: 'alertmanager', summary: (b) => b[0].annotations.summary, holder: (b) => b[0].annotations.holder },
  { format: 'alertmanager-webhook', summary: (b) => b.alerts[0].annotations.summary, holder: (b) => b.alerts[0].annotations.holder },
];

const build = (format: WebhookFormat, over: Parameters<typeof evaluatedMessage>[0]) =>
  JSON.parse(buildRequest(format, evaluatedMessage(over), { ...CTX, endpointUrl: 'http://127.0.0.1:19093' }).body) as Payload;

function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value && typeof value === 'object') return Object.values(value).flatMap(stringsOf);
  return [];
}

/** Text in which every backslash starts a whole escape: `\\`, `\xNN` or `\uNNNN`. */
const WHOLE_ESCAPES = /^(?:[^\\]|\\\\|\\x[0-9a-f]{2}|\\u[0-9a-f]{4})*$/;

describe.each(FORMATS)('$format: text from backends, escaped once', ({ format, summary, holder }) => {
  it('shows a holder whose exact text is ctl\\x00 as ctl\\x00 in the summary and the facts', () => {
    const body = build(format, { holder: 'ctl\\x00', previousHolder: 'tab\\x09bidi\\u202e' });
    expect(summary(body)).toContain('tab\\x09bidi\\u202e → ctl\\x00');
    expect(holder(body)).toContain('ctl\\x00');
    for (const text of stringsOf(body)) expect(text).not.toMatch(/\\\\(?:x[0-9a-f]{2}|u[0-9a-f]{4})/);
  });

  it('keeps a backslash the value had as its one escape, \\\\', () => {
    const body = build(format, { holder: 'CORP\\\\alice' });
    expect(holder(body)).toContain('CORP\\\\alice');
    expect(holder(body)).not.toContain('CORP\\\\\\\\alice');
  });

  it('cuts a 10 kB key of escapes between escapes, wherever it is cut', () => {
    const body = build(format, { key: '\\x00'.repeat(2_560), holder: 'ctl\\x00' });
    for (const text of stringsOf(body)) expect(text).toMatch(WHOLE_ESCAPES);
    expect(summary(body)).toMatch(/^redis-main\/(?:\\x00)+…: /);
  });
});

// Slack incoming webhooks: a Block Kit message (header, summary, the facts as fields, a
// context line, a button to the console) with `text` as the notification fallback.
//
// Slack rejects the whole message (400 invalid_blocks) when one block breaks a limit, so
// every text is cut to its block's limit: header 150 characters, section text 3000, at most
// 10 fields of 2000 each, button label 75 and URL 3000. mrkdwn gives `&`, `<` and `>` a
// meaning (`<!channel>` pings everyone, `<url|text>` is a link), so backend text has them
// escaped; plain_text shows them as they are.
import type { AlertMessage } from '../../../domain/alert-types';
import type { FormatBuilder } from './types';
import { absoluteLink, cleanText, fieldText, formatMs, toJson, truncate } from './text';

const HEADER_MAX = 150;
const SECTION_MAX = 3000;
const FIELD_MAX = 2000;
const BUTTON_TEXT = 'Open in Leasehold';
/** A fact is read at a glance: a 10 kB key is cut well before the field's limit. */
const VALUE_MAX = 300;

/** Text for a mrkdwn object: cleaned, `&<>` escaped, at most `max` characters without a broken entity at the cut. */
export function mrkdwn(value: string, max: number): string {
  const escaped = cleanText(value).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return truncate(escaped, max).replace(/&[a-z]{0,3}…$/, '…');
}

const SEVERITY_MARK: Record<string, string> = { critical: '🔴', warning: '🟠', info: '🔵' };

function headline(message: AlertMessage): string {
  const { alert } = message;
  const state = message.type === 'alert.test' ? 'TEST' : alert.status === 'resolved' ? 'RESOLVED' : alert.severity.toUpperCase();
  const mark = message.type === 'alert.test' ? '🧪' : alert.status === 'resolved' ? '✅' : (SEVERITY_MARK[alert.severity] ?? '⚪');
  return `${mark} ${state} · ${alert.rule.name}`;
}

function field(label: string, value: string | null): { type: 'mrkdwn'; text: string } {
  return { type: 'mrkdwn', text: `*${label}*\n${value === null || value === '' ? '—' : mrkdwn(value, Math.min(VALUE_MAX, FIELD_MAX - label.length - 4))}` };
}

export const buildSlack: FormatBuilder = (message, ctx) => {
  const { alert } = message;
  const link = absoluteLink(message.link);
  const title = headline(message);
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: fieldText(title, HEADER_MAX), emoji: true } },
    { type: 'section', text: { type: 'mrkdwn', text: mrkdwn(alert.summary || title, SECTION_MAX) } },
    {
      type: 'section',
      fields: [
        field('Lease', alert.leaseKey ?? alert.leaseId),
        field('Holder', alert.holder),
        field('Token', alert.token),
        field('Margin', formatMs(alert.marginMs)),
        field('Gap', formatMs(alert.gapMs)),
        field('Source', alert.source),
      ],
    },
  ];
  const since = alert.status === 'resolved' && alert.endsAt ? `resolved ${alert.endsAt}, fired ${alert.startsAt}` : `firing since ${alert.startsAt}`;
  const seen = alert.occurrences > 1 ? ` · seen ${alert.occurrences} times` : '';
  // A console path that is not absolute cannot be a button (Slack wants a URL): it is shown.
  const where = message.link && !link ? ` · ${message.link}` : '';
  blocks.push({
    type: 'context',
    elements: [{ type: 'mrkdwn', text: mrkdwn(`${alert.rule.type} · ${since}${seen} · via ${ctx.endpointName}${where}`, SECTION_MAX) }],
  });
  if (link) {
    blocks.push({ type: 'actions', elements: [{ type: 'button', action_id: 'open_in_leasehold', text: { type: 'plain_text', text: BUTTON_TEXT }, url: link }] });
  }
  const fallback = `${title}: ${alert.summary}`;
  return { url: ctx.endpointUrl, body: toJson({ text: mrkdwn(fallback, SECTION_MAX), blocks }) };
};

// Slack incoming webhooks: a Block Kit message (header, summary, the facts as fields, a
// context line, a button to the console) with `text` as the notification fallback.
//
// Slack rejects the whole message (400 invalid_blocks) when one block breaks a limit, so
// every text is cut to its block's limit: header 150 characters, section text 3000, at most
// 10 fields of 2000 each, button label 75 and URL 3000.
//
// Keys, holders and the summary that quotes them are backend text, and must read in Slack as
// they are. In mrkdwn they would not: `&`, `<` and `>` have escapes there (`<!channel>` pings
// everyone, `<url|text>` is a link), but `*`, `_`, `~` and backticks format text and have
// none; the ways round it (a zero-width character inside, a lookalike character, a code span
// that a backtick in the value closes) all change what a person copies out of the message, and
// a copied key that is not the key is worse than no formatting. So every text that holds
// backend text is plain_text, which Slack shows as it is sent (no formatting, mentions or
// links: `&<>` are not escaped there), with `emoji: false` so that a key such as
// `app:lock:leader` does not become an emoji. The fields' labels lose their bold: a label and
// its value share one text object. The header is plain_text too; it carries the rule's name,
// which an admin chose, so its :emoji: codes are drawn. Only `text`, the fallback for
// notifications, is mrkdwn by Slack's rule: it has `&<>` escaped and the message says
// `mrkdwn: false`, which turns formatting off for it.
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

type PlainText = { type: 'plain_text'; text: string; emoji: false };

/** A plain_text object for backend text, cut to `max`. */
function plainText(value: string, max: number): PlainText {
  return { type: 'plain_text', text: fieldText(value, max), emoji: false };
}

function field(label: string, value: string | null): PlainText {
  const shown = value === null || value === '' ? '—' : fieldText(value, Math.min(VALUE_MAX, FIELD_MAX - label.length - 1));
  return { type: 'plain_text', text: `${label}\n${shown}`, emoji: false };
}

export const buildSlack: FormatBuilder = (message, ctx) => {
  const { alert } = message;
  const link = absoluteLink(message.link);
  const title = headline(message);
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: fieldText(title, HEADER_MAX), emoji: true } },
    { type: 'section', text: plainText(alert.summary || title, SECTION_MAX) },
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
    elements: [plainText(`${alert.rule.type} · ${since}${seen} · via ${ctx.endpointName}${where}`, SECTION_MAX)],
  });
  if (link) {
    blocks.push({ type: 'actions', elements: [{ type: 'button', action_id: 'open_in_leasehold', text: { type: 'plain_text', text: BUTTON_TEXT }, url: link }] });
  }
  const fallback = `${title}: ${alert.summary}`;
  return { url: ctx.endpointUrl, body: toJson({ text: mrkdwn(fallback, SECTION_MAX), mrkdwn: false, blocks }) };
};

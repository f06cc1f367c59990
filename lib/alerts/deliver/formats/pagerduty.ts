// PagerDuty Events API v2 (POST to the endpoint's URL, normally
// https://events.pagerduty.com/v2/enqueue). A firing alert is a `trigger`, a resolved one a
// `resolve` with the same dedup_key (the alert's fingerprint), which closes the incident the
// trigger opened. PagerDuty's limits: summary 1024 characters, dedup_key 255, the whole
// event 512 kB (past that it is refused, so the details give way first, as Alertmanager's
// own PagerDuty notifier does).
import type { AlertSeverity } from '../../../domain/alert-types';
import type { FormatBuilder } from './types';
import { absoluteLink, fieldText, toJson } from './text';

const SUMMARY_MAX = 1024;
const KEY_MAX = 255;
const DETAIL_MAX = 1024;
const DETAIL_JSON_MAX = 16_384;
const EVENT_MAX_BYTES = 512_000;

const SEVERITY: Record<AlertSeverity, 'critical' | 'warning' | 'info'> = { critical: 'critical', warning: 'warning', info: 'info' };

export const buildPagerDuty: FormatBuilder = (message, ctx) => {
  const routingKey = ctx.routingKey?.trim();
  if (!routingKey) {
    throw new Error(`the pagerduty format needs a routing key: set the endpoint "${fieldText(ctx.endpointName, 80)}"'s routingKey to its Events API v2 integration key`);
  }
  const { alert } = message;
  const dedupKey = fieldText(alert.fingerprint, KEY_MAX);
  if (alert.status === 'resolved') {
    return { url: ctx.endpointUrl, body: toJson({ routing_key: routingKey, event_action: 'resolve', dedup_key: dedupKey }) };
  }
  const link = absoluteLink(message.link);
  const text = (value: string | null) => (value === null ? null : fieldText(value, DETAIL_MAX));
  let detail: unknown = alert.detail;
  if (detail !== null && toJson(detail).length > DETAIL_JSON_MAX) detail = `(${toJson(detail).length} characters of detail left out: see the alert in Leasehold)`;
  const customDetails: Record<string, unknown> = {
    rule: text(alert.rule.name),
    rule_type: alert.rule.type,
    rule_id: text(alert.rule.id),
    alert_id: text(alert.id),
    test: message.type === 'alert.test',
    source: text(alert.source),
    lease_id: text(alert.leaseId),
    lease: text(alert.leaseKey),
    holder: text(alert.holder),
    previous_holder: text(alert.previousHolder),
    // Fencing tokens stay decimal strings: they may exceed what a JSON number holds exactly.
    token: text(alert.token),
    previous_token: text(alert.previousToken),
    ttl_ms: alert.ttlMs,
    margin_ms: alert.marginMs,
    gap_ms: alert.gapMs,
    occurrences: alert.occurrences,
    starts_at: alert.startsAt,
    link: message.link === null ? null : fieldText(message.link, DETAIL_MAX),
    detail,
  };
  const prefix = message.type === 'alert.test' ? '[test] ' : '';
  const event = {
    routing_key: routingKey,
    event_action: 'trigger',
    dedup_key: dedupKey,
    payload: {
      summary: fieldText(`${prefix}${alert.summary || alert.rule.name}`, SUMMARY_MAX),
      source: fieldText(alert.source, KEY_MAX) || 'leasehold',
      severity: SEVERITY[alert.severity] ?? 'warning',
      timestamp: alert.startsAt,
      component: alert.leaseKey ?? alert.leaseId ? fieldText(alert.leaseKey ?? alert.leaseId, KEY_MAX) : undefined,
      group: fieldText(alert.source, KEY_MAX) || undefined,
      class: alert.rule.type,
      custom_details: customDetails,
    },
    client: 'Leasehold',
    client_url: link ?? undefined,
    links: link ? [{ href: link, text: 'Open in Leasehold' }] : undefined,
  };
  let body = toJson(event);
  if (Buffer.byteLength(body, 'utf8') > EVENT_MAX_BYTES) {
    event.payload.custom_details = { error: `details left out: the event was over PagerDuty's ${EVENT_MAX_BYTES} bytes` };
    body = toJson(event);
  }
  return { url: ctx.endpointUrl, body };
};

// The webhook formats: one file each, all built from the same AlertMessage.
import type { AlertMessage } from '../../../domain/alert-types';
import { buildAlertmanager } from './alertmanager';
import { buildAlertmanagerWebhook } from './alertmanager-webhook';
import { buildNative } from './native';
import { buildPagerDuty } from './pagerduty';
import { buildSlack } from './slack';
import type { BuiltRequest, FormatBuilder, FormatContext } from './types';

export type { BuiltRequest, FormatContext } from './types';

export const WEBHOOK_FORMATS = ['native', 'slack', 'pagerduty', 'alertmanager-webhook', 'alertmanager'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

const BUILDERS: Record<WebhookFormat, FormatBuilder> = {
  native: buildNative,
  slack: buildSlack,
  pagerduty: buildPagerDuty,
  'alertmanager-webhook': buildAlertmanagerWebhook,
  alertmanager: buildAlertmanager,
};

export function isWebhookFormat(value: unknown): value is WebhookFormat {
  return typeof value === 'string' && (WEBHOOK_FORMATS as readonly string[]).includes(value);
}

/** The URL to POST to and the JSON body, for one message in one format. Throws when the endpoint lacks what the format needs (a routing key). */
export function buildRequest(format: WebhookFormat, message: AlertMessage, ctx: FormatContext): BuiltRequest {
  const build = BUILDERS[format];
  if (!build) throw new Error(`unknown webhook format "${String(format).slice(0, 40)}": expected one of ${WEBHOOK_FORMATS.join(', ')}`);
  return build(message, ctx);
}

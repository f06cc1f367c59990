// A real Alertmanager, through its API: POST /api/v2/alerts with one postable alert, as
// Prometheus sends them. Alertmanager then groups, silences, inhibits and routes it like any
// other alert.
//
// A firing alert is sent with endsAt = now + 4 resend intervals: Leasehold sends it again
// every interval, and if Leasehold goes away Alertmanager resolves it by itself instead of
// showing it firing for ever (Prometheus does the same with 4 × its resend delay). A resolved
// alert is sent with the time it ended, which Alertmanager takes as resolved.
import type { FormatBuilder } from './types';
import { alertAnnotations, alertLabels } from './alertmanager-labels';
import { absoluteLink, toJson } from './text';

const API_PATH = '/api/v2/alerts';
const RESENDS_BEFORE_EXPIRY = 4;

/** `${endpointUrl}/api/v2/alerts`, whether the endpoint names Alertmanager's base URL (with or without a trailing slash) or the API path itself. */
export function alertmanagerAlertsUrl(endpointUrl: string): string {
  const expected = 'the alertmanager format needs the endpoint URL to be Alertmanager\'s base URL, such as "http://alertmanager:9093"';
  let url: URL;
  try {
    url = new URL(endpointUrl);
  } catch {
    throw new Error(expected);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(expected);
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path.endsWith(API_PATH) ? path : `${path}${API_PATH}`;
  return url.toString();
}

export const buildAlertmanager: FormatBuilder = (message, ctx) => {
  const { alert } = message;
  if (!Number.isFinite(ctx.resendIntervalMs) || ctx.resendIntervalMs <= 0) {
    throw new Error(`the alertmanager format needs a positive resend interval, not ${ctx.resendIntervalMs} ms`);
  }
  const startsAt = Date.parse(alert.startsAt);
  const ended = alert.status === 'resolved' ? Date.parse(alert.endsAt ?? '') : NaN;
  let endsAt = alert.status === 'resolved' ? (Number.isNaN(ended) ? ctx.now.getTime() : ended) : ctx.now.getTime() + RESENDS_BEFORE_EXPIRY * ctx.resendIntervalMs;
  // Alertmanager refuses an alert that ends before it starts (clocks disagree now and then).
  if (!Number.isNaN(startsAt) && endsAt < startsAt) endsAt = startsAt;
  const link = absoluteLink(message.link);
  const postable = {
    labels: alertLabels(message),
    annotations: alertAnnotations(message),
    startsAt: alert.startsAt,
    endsAt: new Date(endsAt).toISOString(),
    ...(link ? { generatorURL: link } : {}),
  };
  return { url: alertmanagerAlertsUrl(ctx.endpointUrl), body: toJson([postable]) };
};

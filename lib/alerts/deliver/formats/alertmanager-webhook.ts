// The payload Alertmanager's webhook receiver sends (version "4"), for receivers written for
// Alertmanager: one group holding the one alert. As Alertmanager does, a firing alert's
// endsAt is Go's zero time "0001-01-01T00:00:00Z" (it hides an end that has not come:
// types.Alerts), a resolved one's is when it ended.
import type { FormatBuilder } from './types';
import { alertAnnotations, alertLabels, type LabelSet } from './alertmanager-labels';
import { absoluteLink, toJson } from './text';

export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

/** Alertmanager's group key form, `{}:{name="value", ...}`: the route's matchers (none here), then the group's labels. */
function groupKey(labels: LabelSet): string {
  const pairs = Object.keys(labels)
    .sort()
    .map((name) => `${name}=${JSON.stringify(labels[name])}`);
  return `{}:{${pairs.join(', ')}}`;
}

export const buildAlertmanagerWebhook: FormatBuilder = (message, ctx) => {
  const { alert } = message;
  const labels = alertLabels(message);
  const annotations = alertAnnotations(message);
  const link = absoluteLink(message.link);
  const endsAt = alert.status === 'resolved' ? (alert.endsAt ?? ctx.now.toISOString()) : GO_ZERO_TIME;
  const payload = {
    version: '4',
    groupKey: groupKey(labels),
    truncatedAlerts: 0,
    status: alert.status,
    receiver: ctx.endpointName,
    groupLabels: labels,
    commonLabels: labels,
    commonAnnotations: annotations,
    // Alertmanager puts its own URL here; ours is the console's, when it is known.
    externalURL: link ? new URL(link).origin : '',
    alerts: [
      {
        status: alert.status,
        labels,
        annotations,
        startsAt: alert.startsAt,
        endsAt,
        generatorURL: link ?? '',
        fingerprint: alert.fingerprint,
      },
    ],
  };
  return { url: ctx.endpointUrl, body: toJson(payload) };
};

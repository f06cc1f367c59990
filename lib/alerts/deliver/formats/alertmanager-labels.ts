// The labels and annotations both Alertmanager formats carry.
//
// Alertmanager identifies an alert by its label set, so the labels are what stays the same
// from firing to resolved (rule, subject, severity, the fingerprint) and never the holder or
// the token, which change: those are annotations. Values are well-formed (valid UTF-8 once
// encoded) and at most 1024 characters; Alertmanager drops labels with empty values, so
// absent ones are left out here too, and the label set it keeps is the one sent.
import type { AlertMessage } from '../../../domain/alert-types';
import { fieldText, formatMs } from './text';

export const LABEL_VALUE_MAX = 1024;

export type LabelSet = Record<string, string>;

function compact(entries: [string, string | null | undefined][]): LabelSet {
  const out: LabelSet = {};
  for (const [name, value] of entries) {
    const text = fieldText(value, LABEL_VALUE_MAX);
    if (text !== '') out[name] = text;
  }
  return out;
}

export function alertLabels(message: AlertMessage): LabelSet {
  const { alert } = message;
  return compact([
    ['alertname', alert.rule.type],
    ['severity', alert.severity],
    ['rule', alert.rule.name],
    ['source', alert.source],
    ['lease', alert.leaseKey ?? alert.leaseId],
    // Two 10 kB keys that share their first kilobyte stay two alerts.
    ['leasehold_fingerprint', alert.fingerprint],
    ['leasehold_test', message.type === 'alert.test' ? 'true' : null],
  ]);
}

export function alertAnnotations(message: AlertMessage): LabelSet {
  const { alert } = message;
  return compact([
    ['summary', alert.summary],
    ['holder', alert.holder],
    ['previous_holder', alert.previousHolder],
    ['token', alert.token],
    ['previous_token', alert.previousToken],
    ['lease_id', alert.leaseId],
    ['ttl', formatMs(alert.ttlMs)],
    ['margin', formatMs(alert.marginMs)],
    ['gap', formatMs(alert.gapMs)],
    ['occurrences', String(alert.occurrences)],
    ['link', message.link],
  ]);
}

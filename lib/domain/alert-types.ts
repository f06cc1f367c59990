// The vocabulary of alerts (docs/alerts.md), as types. Pure: no I/O.
//
// A rule watches leases (or sources) within its scope and raises at most one open alert per
// rule and subject (a lease, or a source for source_down): the alert's fingerprint names that
// pair and stays the same from firing to resolved, so a receiver (PagerDuty's dedup_key,
// Alertmanager's label set) can pair the two.

import type { AlertView } from './schemas/alerts';

// The rule types are the rules listed in lib/domain/alert-rules/registry.ts, one module each.
export { ALERT_RULE_TYPES, type AlertRuleType } from './alert-rules/registry';

export const ALERT_SEVERITIES = ['info', 'warning', 'critical'] as const;
export type AlertSeverity = (typeof ALERT_SEVERITIES)[number];

export type AlertStatus = 'firing' | 'resolved';

/** Which leases a rule watches: every lease, one source's, or lease ids matching a glob (`*` any run of characters). */
export type AlertScope = { kind: 'all' } | { kind: 'source'; source: string } | { kind: 'lease'; pattern: string };

/** An alert as the API shows it and as every delivery format is built from: lib/domain/schemas/alerts.ts. */
export type { AlertView };

/** The native webhook body: what happened to which alert, and where to look. */
export type AlertMessage = {
  type: 'alert.firing' | 'alert.resolved' | 'alert.test';
  /** When this message was made (ISO). */
  at: string;
  alert: AlertView;
  /** The console's page for the lease or source, absolute when the console's public URL is known. */
  link: string | null;
};

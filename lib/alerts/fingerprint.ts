// An alert's fingerprint: the same for one rule and subject from firing to resolved, and for
// every later alert of that pair (PagerDuty's dedup_key, Alertmanager's identity).
import { createHash } from 'node:crypto';
import { subjectId, type AlertSubject } from '../domain/alert-rules';

export function alertFingerprint(ruleId: string, subject: AlertSubject): string {
  return createHash('sha256').update(`${ruleId}\n${subjectId(subject)}`).digest('hex').slice(0, 32);
}

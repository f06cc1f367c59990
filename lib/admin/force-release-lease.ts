// Force-release (docs/admin-actions.md): frees a lease. On a fenced lease it raises the token in
// the same step, as force-expire does (operator or admin). On an unfenced lease (ShedLock
// rows, Redis locks without a fence counter, Postgres advisory locks) nothing can stop the
// old holder from acting: admin only, and only with acknowledgeUnfenced: true.
import { forbidden } from '../auth/guard';
import { can } from '../auth/permissions';
import { ActionRefusal, runForceAction, type ForceContext, type ForceOutcome } from './guarded-force';
import { NotPossibleError } from './force-request';

export function forceReleaseLease(context: ForceContext): Promise<ForceOutcome> {
  return runForceAction('force-release', context, (lease, { principal, body }) => {
    const permission = lease.fenced ? 'lease:force' : 'lease:force-unfenced';
    if (!can(principal.role, permission)) throw new ActionRefusal(forbidden(principal, permission));
    if (!lease.fenced && body.acknowledgeUnfenced !== true) {
      throw new ActionRefusal(
        new NotPossibleError(
          'unfenced_not_acknowledged',
          `${lease.id} is not fenced: after a release its old holder may still act, and nothing will refuse its writes. Send "acknowledgeUnfenced": true to release it anyway.`,
        ),
      );
    }
  });
}

// Force-expire (docs/admin-actions.md): ends a fenced lease now and raises its fencing token in
// the same atomic step, so the old holder's late writes are refused by the fenced store.
// Operator or admin. An unfenced lease cannot be force-expired (422): force-release it.
import { forbidden } from '../auth/guard';
import { can } from '../auth/permissions';
import { ActionRefusal, runForceAction, type ForceContext, type ForceOutcome } from './guarded-force';
import { NotPossibleError } from './force-request';

export function forceExpireLease(context: ForceContext): Promise<ForceOutcome> {
  return runForceAction('force-expire', context, (lease, { principal }) => {
    if (!can(principal.role, 'lease:force')) throw new ActionRefusal(forbidden(principal, 'lease:force'));
    if (!lease.fenced) {
      throw new ActionRefusal(
        new NotPossibleError(
          'unfenced',
          `${lease.id} is not fenced (its backend keeps no token), so expiring it cannot stop the old holder's late writes. An admin can force-release it, acknowledging that the old holder may still act.`,
        ),
      );
    }
  });
}

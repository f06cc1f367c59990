// The admin actions as the server runs them: the one table (lib/domain/admin-actions.ts), its
// permissions typed against lib/auth/permissions.ts, and the rules every row is judged by
// (docs/admin-actions.md, "The rules"): the permission for this lease, fenced or not, and what
// an unfenced lease asks. guarded-force.ts runs a row; force-path.ts finds it by its path.
import { forbidden } from '../auth/guard';
import { can, type Permission } from '../auth/permissions';
import type { Principal } from '../auth/principal';
import { ADMIN_ACTIONS as ROWS, type AdminActionRow, type AdminActionTable, type ForceAction, type ForceEventType } from '../domain/admin-actions';
import type { AuthError } from '../auth/errors';
import { NotPossibleError, type ForceBody } from './force-request';

export type { ForceAction, ForceEventType };

/** A row of the table, its permissions as lib/auth/permissions.ts names them. */
export type AdminAction = AdminActionRow & {
  readonly name: ForceAction;
  readonly eventType: ForceEventType;
  readonly permission: Permission;
  readonly unfenced: AdminActionRow['unfenced'] & { readonly permission: Permission };
};

/** The table (lib/domain/admin-actions.ts): a permission it names that lib/auth does not know fails to compile here. */
export const ADMIN_ACTIONS: AdminActionTable<AdminAction> & { readonly [K in ForceAction]: AdminAction } = ROWS;

/** Who asks, with what body. `granted`: a permission the caller was already checked for (the route's rule), not asked again. */
export type Asker = { principal: Principal; body: Pick<ForceBody, 'acknowledgeUnfenced'>; granted?: Permission };

/**
 * Why `action` may not be taken on `lease` by this caller, or null: 403 without the permission
 * the lease asks (fenced or not), 422 `unfenced` for a fencedOnly action on a lease without a
 * token, 422 `unfenced_not_acknowledged` for another without `acknowledgeUnfenced: true`.
 */
export function refusalOf(action: AdminAction, lease: { id: string; fenced: boolean }, { principal, body, granted }: Asker): AuthError | NotPossibleError | null {
  const permission = lease.fenced ? action.permission : action.unfenced.permission;
  if (permission !== granted && !can(principal.role, permission)) return forbidden(principal, permission);
  if (lease.fenced) return null;
  if (action.fencedOnly) return new NotPossibleError('unfenced', action.unfenced.refusal(lease.id));
  if (body.acknowledgeUnfenced !== true) return new NotPossibleError('unfenced_not_acknowledged', action.unfenced.refusal(lease.id));
  return null;
}

// The admin actions (docs/admin-actions.md), one row each: what an action is called, the event
// it adds to the lease's history, the permission it needs, whether it needs a fenced lease, what
// it leaves behind, and how the console and the CLI name it. Pure, so that every layer reads the
// same rows: the route and its runner (lib/admin/actions.ts types the permissions against
// lib/auth/permissions.ts), the backends' compare-and-set (lib/sources/force.ts hands them the
// row), the console's action panel, the CLI, the lease's events and the force_action alert.
// A new action is a row here and, in each backend's force.ts, whatever the row's properties
// do not already say.
export type AdminActionRow = {
  /** The last segment of its path (POST /api/v1/leases/{id}/<name>), the audit entry's `action`, the CLI's command. */
  readonly name: string;
  /** The event a done action adds to the lease's history; the action a force_action alert names. One of the event types (lib/domain/types.ts EVENT_TYPES lists the table's). */
  readonly eventType: string;
  /** The permission (lib/auth/permissions.ts) it needs on a fenced lease. */
  readonly permission: string;
  /** Refused on a lease without a token (422 `unfenced`): it cannot stop the old holder's late writes. */
  readonly fencedOnly: boolean;
  /**
   * On a lease without a token: the permission it needs, and why it is refused there: always for
   * a fencedOnly action (422 `unfenced`), else when the body lacks `acknowledgeUnfenced: true`
   * (422 `unfenced_not_acknowledged`).
   */
  readonly unfenced: { readonly permission: string; readonly refusal: (leaseId: string) => string };
  /** Where the backend can tell (a PostgreSQL lease row), the lease reads as released afterwards (its holder cleared), not as expired. */
  readonly clearsHolder: boolean;
  /** How the console names it: "Force-expire". */
  readonly title: string;
  /** What was done, as a summary says it: "force-expired". */
  readonly done: string;
  /** What it does to a fenced lease, in a few words (the console's choice of action). */
  readonly effect: string;
  /** A failover it caused, as the failovers page names the cause: "forced expiry". */
  readonly asCause: string;
};

/** A table of actions: each row under its own name. */
export type AdminActionTable<R extends AdminActionRow = AdminActionRow> = { readonly [name: string]: R };

const table = <T extends { readonly [K in keyof T]: AdminActionRow & { readonly name: K } }>(rows: T): T => rows;

export const ADMIN_ACTIONS = table({
  'force-expire': {
    name: 'force-expire',
    eventType: 'force_expired',
    permission: 'lease:force',
    fencedOnly: true,
    unfenced: {
      permission: 'lease:force',
      refusal: (leaseId: string) =>
        `${leaseId} is not fenced (its backend keeps no token), so expiring it cannot stop the old holder's late writes. An admin can force-release it, acknowledging that the old holder may still act.`,
    },
    clearsHolder: false,
    title: 'Force-expire',
    done: 'force-expired',
    effect: 'ends it now, raises the token',
    asCause: 'forced expiry',
  },
  'force-release': {
    name: 'force-release',
    eventType: 'force_released',
    permission: 'lease:force',
    fencedOnly: false,
    unfenced: {
      permission: 'lease:force-unfenced',
      refusal: (leaseId: string) =>
        `${leaseId} is not fenced: after a release its old holder may still act, and nothing will refuse its writes. Send "acknowledgeUnfenced": true to release it anyway.`,
    },
    clearsHolder: true,
    title: 'Force-release',
    done: 'force-released',
    effect: 'frees it, raises the token',
    asCause: 'forced release',
  },
} as const);

export type ForceAction = keyof typeof ADMIN_ACTIONS;
/** The events the admin actions add to a lease's history. */
export type ForceEventType = (typeof ADMIN_ACTIONS)[ForceAction]['eventType'];

/** Those events, in the table's order: the event types, the changes of hands, the failover causes and the token chart take them from here. */
export const FORCE_EVENT_TYPES = Object.values(ADMIN_ACTIONS).map((row) => row.eventType) as readonly ForceEventType[];

/** Each action's word for a failover it caused ("forced expiry"), by its event. */
export const FORCE_CAUSE_TEXT = Object.fromEntries(Object.values(ADMIN_ACTIONS).map((row) => [row.eventType, row.asCause])) as Record<ForceEventType, string>;

/** The row named `name` in `actions`, or null (no such name, or one every object has, such as "toString"). */
export function actionNamed<R extends AdminActionRow>(name: unknown, actions: AdminActionTable<R>): R | null {
  return typeof name === 'string' && Object.hasOwn(actions, name) ? actions[name]! : null;
}

/** The row whose event `eventType` is, or null. */
export function actionOfEvent(eventType: string, actions: AdminActionTable = ADMIN_ACTIONS): AdminActionRow | null {
  return Object.values(actions).find((row) => row.eventType === eventType) ?? null;
}

/** The actions a lease allows, fenced or not, in the table's order (the first is the console's default). */
export function actionsFor(fenced: boolean, actions: AdminActionTable = ADMIN_ACTIONS): AdminActionRow[] {
  return Object.values(actions).filter((row) => fenced || !row.fencedOnly);
}

/** What can still be done to a lease without a token, for a refusal's message: "force-released". */
export function unfencedAlternatives(actions: AdminActionTable = ADMIN_ACTIONS): string {
  return actionsFor(false, actions)
    .map((row) => row.done)
    .join(' or ');
}

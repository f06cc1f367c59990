// An admin action is one row of one table (lib/domain/admin-actions.ts, typed for the server in
// lib/admin/actions.ts): its name, event type, permission, whether it needs a fenced lease, and
// what the backends' compare-and-set reads from it. Every place that names actions derives
// them from the table; here a toy third row, handed to the same functions, is found by the
// path, checked by the backend contract, judged by the rules and named by its event.
import { describe, expect, it } from 'vitest';
import { ADMIN_ACTIONS, refusalOf, type AdminAction, type ForceAction } from '../../lib/admin/actions';
import { parseForcePath } from '../../lib/admin/force-path';
import { forceBody } from '../../lib/admin/force-request';
import { PERMISSIONS } from '../../lib/auth/permissions';
import type { Principal } from '../../lib/auth/principal';
import { ROUTE_RULES } from '../../lib/auth/route-rules';
import type { Role } from '../../lib/config/auth-schema';
import { actionNamed, actionOfEvent, actionsFor, unfencedAlternatives, type AdminActionTable } from '../../lib/domain/admin-actions';
import { forceAction } from '../../lib/domain/alert-rules/force-action';
import { EVENT_TYPES, type EventType } from '../../lib/domain/types';
import { checkRequest, ForceNotPossibleError, type ForceRequest } from '../../lib/sources/force';
import { leaseTableStatement } from '../../lib/sources/postgres/force-sql';

const who = (role: Role): Principal => ({ name: `a-${role}`, role, method: 'token', userId: null, tokenId: 't', sessionId: null, address: '127.0.0.1' });
const fenced = { id: 'pg-main/leases/job', fenced: true };
const unfenced = { id: 'pg-main/shedlock/job', fenced: false };
const request = (action: string, change: Partial<ForceRequest> = {}): ForceRequest => ({ action: action as ForceAction, key: 'leases/job', expectedHolder: 'worker-7', expectedToken: '42', ...change });
const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error as ForceNotPossibleError;
  }
  throw new Error('not refused');
};

/** A third action nobody wrote anywhere else: a fencedOnly one, with its own event and permission. */
const poke: AdminAction = {
  name: 'force-poke' as ForceAction,
  eventType: 'force_poked' as EventType as AdminAction['eventType'],
  permission: 'demo:control',
  fencedOnly: true,
  unfenced: { permission: 'demo:control', refusal: (id) => `${id} cannot be poked` },
  clearsHolder: false,
  title: 'Force-poke',
  done: 'force-poked',
  effect: 'pokes it',
  asCause: 'forced poke',
};
const WITH_POKE: AdminActionTable<AdminAction> = { ...ADMIN_ACTIONS, [poke.name]: poke };

describe('the table of admin actions', () => {
  it('names each row by its own name, with its own event type and a permission lib/auth knows', () => {
    expect(Object.keys(ADMIN_ACTIONS)).toEqual(['force-expire', 'force-release']);
    for (const [name, row] of Object.entries(ADMIN_ACTIONS)) {
      expect(row.name).toBe(name);
      expect(EVENT_TYPES).toContain(row.eventType);
      expect(Object.keys(PERMISSIONS)).toEqual(expect.arrayContaining([row.permission, row.unfenced.permission]));
      expect(actionOfEvent(row.eventType)).toBe(row);
    }
    expect(new Set(Object.values(ADMIN_ACTIONS).map((row) => row.eventType)).size).toBe(2);
    // The route's rule asks the permission every action needs on a fenced lease, once.
    for (const row of Object.values(ADMIN_ACTIONS)) expect(row.permission).toBe(ROUTE_RULES['POST /api/v1/leases/[...path]']);
  });

  it('the path names exactly the table\'s actions, and the 404 lists them', () => {
    for (const [name, row] of Object.entries(ADMIN_ACTIONS)) {
      expect(parseForcePath(['pg-main', 'leases', 'job', name])).toEqual({ leaseId: 'pg-main/leases/job', action: row });
    }
    for (const name of ['force-poke', 'toString', '__proto__', 'constructor', 'events']) {
      expect(() => parseForcePath(['pg-main', 'leases', 'job', name])).toThrow('POST goes to /api/v1/leases/{id}/force-expire or /api/v1/leases/{id}/force-release.');
    }
    expect(() => parseForcePath(['force-expire'])).toThrow(/POST goes to/);
  });

  it('the backend contract takes exactly the table\'s actions and hands the backend the row', () => {
    for (const row of Object.values(ADMIN_ACTIONS)) expect(checkRequest(request(row.name)).row).toBe(row);
    expect(refusal(() => checkRequest(request('force-poke')))).toMatchObject({ code: 'invalid', message: 'the action is force-expire or force-release' });
    expect(refusal(() => checkRequest(request('force-expire', { expectedToken: null })))).toMatchObject({
      code: 'unfenced',
      message: 'the lease has no fencing token: it cannot be force-expired, only force-released (the old holder may still act)',
    });
    expect(checkRequest(request('force-release', { expectedToken: null })).token).toBeNull();
    expect(unfencedAlternatives()).toBe('force-released');
  });

  it('what the person saw has one set of limits: the API body and the contract refuse the same values', () => {
    const body = { expectedHolder: 'worker-7', expectedToken: '42', reason: 'stuck since the deploy' };
    const cases: Partial<ForceRequest>[] = [{ expectedHolder: '' }, { expectedHolder: 'h'.repeat(10_240) }, { expectedToken: '9'.repeat(79) }, { expectedToken: '-1' }, { quarantineMs: 0 }, { quarantineMs: 1.5 }, { quarantineMs: 3_600_001 }];
    for (const change of cases) {
      expect(forceBody.safeParse({ ...body, ...change }).success, JSON.stringify(change).slice(0, 60)).toBe(false);
      expect(refusal(() => checkRequest(request('force-release', change))).code).toBe('invalid');
    }
    expect(forceBody.safeParse({ ...body, expectedToken: '9'.repeat(78), quarantineMs: 3_600_000 }).success).toBe(true);
    expect(checkRequest(request('force-release', { expectedToken: '9'.repeat(78), quarantineMs: 3_600_000 })).quarantineMs).toBe(3_600_000);
  });

  it('the rules are the row\'s: a permission the route granted is not asked again; the unfenced one is', () => {
    const ask = (role: Role, extra: { granted?: 'lease:force'; acknowledgeUnfenced?: boolean } = {}) => ({ principal: who(role), body: { acknowledgeUnfenced: extra.acknowledgeUnfenced }, granted: extra.granted });
    const expire = ADMIN_ACTIONS['force-expire'];
    const release = ADMIN_ACTIONS['force-release'];
    expect(refusalOf(expire, fenced, ask('viewer'))).toMatchObject({ status: 403, code: 'forbidden' });
    expect(refusalOf(expire, fenced, ask('viewer', { granted: 'lease:force' }))).toBeNull();
    expect(refusalOf(expire, fenced, ask('operator'))).toBeNull();
    expect(refusalOf(expire, unfenced, ask('admin', { acknowledgeUnfenced: true }))).toMatchObject({ status: 422, code: 'unfenced' });
    expect(refusalOf(release, unfenced, ask('operator', { granted: 'lease:force', acknowledgeUnfenced: true }))).toMatchObject({ status: 403, code: 'forbidden' });
    expect(refusalOf(release, unfenced, ask('admin', { granted: 'lease:force' }))).toMatchObject({ status: 422, code: 'unfenced_not_acknowledged' });
    expect(refusalOf(release, unfenced, ask('admin', { acknowledgeUnfenced: true }))).toBeNull();
  });

  it('a toy third row is found by the path, checked by the contract, judged by the rules and named by its event, with no other file changed', () => {
    expect(actionNamed('force-poke', WITH_POKE)).toBe(poke);
    expect(parseForcePath(['pg-main', 'leases', 'job', 'force-poke'], WITH_POKE)).toEqual({ leaseId: 'pg-main/leases/job', action: poke });
    expect(() => parseForcePath(['pg-main', 'leases', 'job', 'force-nope'], WITH_POKE)).toThrow(
      'POST goes to /api/v1/leases/{id}/force-expire or /api/v1/leases/{id}/force-release or /api/v1/leases/{id}/force-poke.',
    );
    expect(checkRequest(request('force-poke'), WITH_POKE)).toMatchObject({ action: 'force-poke', token: 42n, row: poke });
    expect(refusal(() => checkRequest(request('force-poke', { expectedToken: null }), WITH_POKE))).toMatchObject({
      code: 'unfenced',
      message: 'the lease has no fencing token: it cannot be force-poked, only force-released (the old holder may still act)',
    });
    expect(actionOfEvent('force_poked', WITH_POKE)).toBe(poke);
    expect(actionsFor(true, WITH_POKE).map((row) => row.name)).toEqual(['force-expire', 'force-release', 'force-poke']);
    expect(actionsFor(false, WITH_POKE).map((row) => row.name)).toEqual(['force-release']);
    // Its own permission (demo:control: operator and admin), not lease:force's.
    const asker = (role: Role) => ({ principal: who(role), body: {} });
    expect(refusalOf(poke, fenced, asker('viewer'))).toMatchObject({ status: 403, message: expect.stringContaining('turn the demo fleet') });
    expect(refusalOf(poke, fenced, asker('operator'))).toBeNull();
    expect(refusalOf(poke, unfenced, asker('admin'))).toMatchObject({ status: 422, code: 'unfenced', message: 'pg-main/shedlock/job cannot be poked' });
  });

  it('the backends read the row\'s properties, not its name', () => {
    const owner = (row: { clearsHolder: boolean }) => /owner = NULL/.test(leaseTableStatement('leases', new Set(), row, false));
    expect(owner(ADMIN_ACTIONS['force-expire'])).toBe(false);
    expect(owner(ADMIN_ACTIONS['force-release'])).toBe(true);
    expect(owner({ ...poke, clearsHolder: true })).toBe(true);
  });

  it('the force_action alert names what was done from the row', () => {
    expect(forceAction.describe).toBe('someone force-expired or force-released a lease');
  });
});

// Sign-in, sessions, API tokens and user management on real stores (PostgreSQL and the
// embedded PGlite), and the CLI that makes the first admin and the tokens: what ends a session,
// what a token may do, the failed-sign-in limits (also against attempts sent at once), the
// last admin, and that a password is never taken from an argument nor written to a log.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PEER_HEADER } from '../../lib/api/peer';
import { PLAIN_SESSION_COOKIE, SECURE_SESSION_COOKIE } from '../../lib/auth/cookies';
import { AuthError } from '../../lib/auth/errors';
import { addToken, addUser, changeUser, ManageError, removeToken } from '../../lib/auth/manage';
import { hashPassword, verifyPassword } from '../../lib/auth/password';
import { authenticate, type Principal } from '../../lib/auth/principal';
import { sha256 } from '../../lib/auth/secrets';
import { endSession, sessionPrincipal, startSession } from '../../lib/auth/session';
import { FAILURES_PER_ADDRESS, FAILURES_PER_USER, signIn } from '../../lib/auth/sign-in';
import { createToken, tokenPrincipal } from '../../lib/auth/tokens';
import { type Config } from '../../lib/config';
import { loadAppConfig } from '../../lib/root';
import { authSchema, type PersonRole as Role } from '../../lib/config/auth-schema';
import { revokeApiToken } from '../../lib/db/api-tokens';
import { deleteUserSessions, insertSession } from '../../lib/db/sessions';
import { openStore, type Store } from '../../lib/db/store';
import { createUser, updateUser, type UserRecord } from '../../lib/db/users';
import { createLogger, type Logger } from '../../lib/log';
import { STORE_KINDS, createPostgresDatabase, freshPgliteDirectory, type TestDatabase } from '../support/databases';
import { ROOT } from '../support/services';

const uid = () => randomBytes(4).toString('hex');
const MINUTE = 60_000;
const PASSWORD = 'integration-password-1';
/** Shorter than the defaults, so that "later" is minutes, not days. */
const AUTH = authSchema.parse({ sessionIdleMinutes: 30, sessionMaxHours: 2 });
/** Neither demo nor anonymous access unless a test says so. */
const BASE: Config = { ...loadAppConfig({ env: { LEASEHOLD_DEMO: 'off' }, cwd: ROOT }), auth: AUTH };
const withAnonymous = (anonymousRole: 'viewer' | 'none' | undefined): Config => ({ ...BASE, auth: { ...AUTH, anonymousRole } });
const at = (base: Date, ms: number) => new Date(base.getTime() + ms);

/** The AuthError or ManageError a promise rejects with. */
async function refusal(promise: Promise<unknown>): Promise<{ status: number; code: string; headers?: Record<string, string>; message: string }> {
  const error = await promise.then(
    () => {
      throw new Error('expected a refusal, and it succeeded');
    },
    (e: unknown) => e,
  );
  if (!(error instanceof AuthError) && !(error instanceof ManageError)) throw error;
  return error;
}

let passwordHash: string;
beforeAll(async () => {
  passwordHash = await hashPassword(PASSWORD);
});

describe.each(STORE_KINDS)('sessions, tokens and users on $kind', ({ create }) => {
  let db: TestDatabase;
  let store: Store;
  beforeAll(async () => {
    db = await create();
    store = await openStore(db.storeConfig());
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  const newUser = (role: Role = 'operator', name = `u-${uid()}`) => createUser(store, { name, role, passwordHash });
  const sessionRow = (cookieValue: string) => store.prisma.session.findUnique({ where: { id: sha256(cookieValue) } });
  const resolve = (cookieValue: string, now?: Date) => sessionPrincipal(store, AUTH, cookieValue, '203.0.113.5', now);

  describe('sessions', () => {
    it('a session cookie is 43 random characters, and the store keeps only its sha256', async () => {
      const user = await newUser('operator');
      const before = Date.now();
      const { cookieValue, maxAgeSeconds } = await startSession(store, AUTH, user, 'password', '203.0.113.5');
      expect(cookieValue).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(cookieValue, 'base64url')).toHaveLength(32);
      expect(maxAgeSeconds).toBe(2 * 3600);

      const rows = await store.prisma.session.findMany({ where: { userId: user.id } });
      expect(rows).toHaveLength(1);
      expect(rows[0]!.id).toBe(sha256(cookieValue));
      expect(JSON.stringify(rows)).not.toContain(cookieValue);
      expect((await store.prisma.session.findMany()).some((row) => row.id === cookieValue)).toBe(false);
      expect(rows[0]).toMatchObject({ authMethod: 'password', address: '203.0.113.5' });
      expect(Math.abs(rows[0]!.expiresAt.getTime() - (before + 2 * 3600_000))).toBeLessThan(10_000);

      expect(await resolve(cookieValue)).toEqual({
        name: user.name,
        role: 'operator',
        method: 'password',
        userId: user.id,
        tokenId: null,
        sessionId: sha256(cookieValue),
        address: '203.0.113.5',
      });
      // What the store holds is not a cookie; neither is the cookie with one character changed.
      expect(await resolve(sha256(cookieValue))).toBeNull();
      const flipped = `${cookieValue.slice(0, -1)}${cookieValue.endsWith('A') ? 'B' : 'A'}`;
      expect(await resolve(flipped)).toBeNull();
      expect(await resolve(`${cookieValue}=`)).toBeNull();
    });

    it('every sign-in makes a new session with a new cookie (none is reused)', async () => {
      const user = await newUser();
      const first = await startSession(store, AUTH, user, 'password', '203.0.113.5');
      const second = await startSession(store, AUTH, user, 'oidc', '203.0.113.6');
      expect(first.cookieValue).not.toBe(second.cookieValue);
      expect(await store.prisma.session.count({ where: { userId: user.id } })).toBe(2);
      expect((await resolve(first.cookieValue))?.method).toBe('password');
      expect((await resolve(second.cookieValue))?.method).toBe('oidc');
    });

    it(`ends after sessionIdleMinutes without use, and use keeps it alive`, async () => {
      const user = await newUser();
      const idle = await startSession(store, AUTH, user, 'password', '203.0.113.5');
      const used = await startSession(store, AUTH, user, 'password', '203.0.113.5');
      const idleStart = (await sessionRow(idle.cookieValue))!.lastSeenAt;
      expect(await resolve(idle.cookieValue, at(idleStart, 30 * MINUTE - 1_000))).not.toBeNull();
      // That use moved its idle end: unused for 30 minutes after it, it ends, and its row goes.
      const lastUse = (await sessionRow(idle.cookieValue))!.lastSeenAt;
      expect(lastUse.getTime()).toBe(idleStart.getTime() + 30 * MINUTE - 1_000);
      expect(await resolve(idle.cookieValue, at(lastUse, 30 * MINUTE))).toBeNull();
      expect(await sessionRow(idle.cookieValue)).toBeNull();
      expect(await resolve(idle.cookieValue, at(lastUse, 1_000))).toBeNull(); // gone is gone

      const start = (await sessionRow(used.cookieValue))!.lastSeenAt;
      for (const minutes of [20, 40, 60, 80]) expect(await resolve(used.cookieValue, at(start, minutes * MINUTE)), `${minutes} min`).not.toBeNull();
    });

    it('ends sessionMaxHours after sign-in however often used', async () => {
      const user = await newUser();
      const { cookieValue } = await startSession(store, AUTH, user, 'password', '203.0.113.5');
      const { expiresAt } = (await sessionRow(cookieValue))!;
      const start = (await sessionRow(cookieValue))!.lastSeenAt;
      for (let minutes = 20; minutes < 120; minutes += 20) expect(await resolve(cookieValue, at(start, minutes * MINUTE)), `${minutes} min`).not.toBeNull();
      // Used 20 minutes before (well within the idle time), and still ended.
      expect(await resolve(cookieValue, expiresAt)).toBeNull();
      expect(await sessionRow(cookieValue)).toBeNull();
    });

    it('writes lastSeenAt at most once a minute', async () => {
      const user = await newUser();
      const { cookieValue } = await startSession(store, AUTH, user, 'password', '203.0.113.5');
      const first = (await sessionRow(cookieValue))!.lastSeenAt;
      const seen = async (now: Date) => {
        expect(await resolve(cookieValue, now)).not.toBeNull();
        return (await sessionRow(cookieValue))!.lastSeenAt.getTime();
      };
      expect(await seen(at(first, 30_000))).toBe(first.getTime());
      expect(await seen(at(first, 59_999))).toBe(first.getTime());
      expect(await seen(at(first, 61_000))).toBe(first.getTime() + 61_000);
      expect(await seen(at(first, 91_000))).toBe(first.getTime() + 61_000);
      expect(await seen(at(first, 125_000))).toBe(first.getTime() + 125_000);
    });

    it("a disabled user's sessions end: through updateUser, and even if a row is left behind", async () => {
      const viaUpdate = await newUser();
      const a = await startSession(store, AUTH, viaUpdate, 'password', '203.0.113.5');
      await updateUser(store, viaUpdate.id, { disabled: true });
      expect(await resolve(a.cookieValue)).toBeNull();
      expect(await store.prisma.session.count({ where: { userId: viaUpdate.id } })).toBe(0);

      const behindTheBack = await newUser();
      const b = await startSession(store, AUTH, behindTheBack, 'password', '203.0.113.5');
      await store.prisma.user.update({ where: { id: behindTheBack.id }, data: { disabledAt: new Date() } });
      expect(await sessionRow(b.cookieValue)).not.toBeNull();
      expect(await resolve(b.cookieValue)).toBeNull();
      expect(await sessionRow(b.cookieValue)).toBeNull();
    });

    it("a new password ends the user's sessions; a new role does not, and applies at once", async () => {
      const user = await newUser('operator');
      const { cookieValue } = await startSession(store, AUTH, user, 'password', '203.0.113.5');
      await updateUser(store, user.id, { role: 'viewer' });
      expect((await resolve(cookieValue))?.role).toBe('viewer');
      await updateUser(store, user.id, { passwordHash: await hashPassword('another-password-12') });
      expect(await resolve(cookieValue)).toBeNull();
      expect(await store.prisma.session.count({ where: { userId: user.id } })).toBe(0);
    });

    it('sign-out ends that session; sign-out everywhere ends all of the user\'s, and nobody else\'s', async () => {
      const user = await newUser();
      const other = await newUser();
      const cookies = await Promise.all([1, 2, 3].map(() => startSession(store, AUTH, user, 'password', '203.0.113.5')));
      const others = await startSession(store, AUTH, other, 'password', '203.0.113.5');
      const signedOut = await resolve(cookies[0]!.cookieValue);
      await endSession(store, signedOut!.sessionId!);
      expect(await resolve(cookies[0]!.cookieValue)).toBeNull();
      expect(await resolve(cookies[1]!.cookieValue)).not.toBeNull();

      await deleteUserSessions(store, user.id);
      for (const { cookieValue } of cookies) expect(await resolve(cookieValue)).toBeNull();
      expect(await resolve(others.cookieValue)).not.toBeNull();
    });

    it('a new sign-in clears ended sessions from the store', async () => {
      const user = await newUser();
      const expired = sha256(`expired-${uid()}`);
      const idle = sha256(`idle-${uid()}`);
      await insertSession(store, { id: expired, userId: user.id, authMethod: 'password', address: null, expiresAt: new Date(Date.now() - 1_000) });
      await insertSession(store, { id: idle, userId: user.id, authMethod: 'password', address: null, expiresAt: new Date(Date.now() + 3600_000) });
      await store.prisma.session.update({ where: { id: idle }, data: { lastSeenAt: new Date(Date.now() - 31 * MINUTE) } });
      await startSession(store, AUTH, await newUser(), 'password', '203.0.113.5');
      expect(await store.prisma.session.findMany({ where: { id: { in: [expired, idle] } } })).toEqual([]);
    });
  });

  describe('API tokens', () => {
    const tokenName = () => `t-${uid()}`;
    const create = (role: Role, extra: { expiresAt?: Date | null; userId?: string | null } = {}) =>
      createToken(store, { name: tokenName(), role, expiresAt: extra.expiresAt ?? null, userId: extra.userId ?? null, createdBy: 'test' });

    async function expectInvalid(text: string, now?: Date) {
      const error = await refusal(tokenPrincipal(store, text, '203.0.113.5', now));
      expect(error).toMatchObject({ status: 401, code: 'invalid_token' });
      expect(error.headers?.['WWW-Authenticate']).toBe('Bearer realm="leasehold", error="invalid_token"');
    }

    it('is lh_<16 hex>_<43 characters>, stored as its id, a prefix and the sha256 of its secret', async () => {
      const { token, record } = await create('operator');
      const match = /^lh_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/.exec(token);
      expect(match).not.toBeNull();
      const [, id, secret] = match!;
      expect(record).toMatchObject({ id, role: 'operator', prefix: token.slice(0, 10), tokenHash: sha256(secret!), lastUsedAt: null, userId: null, createdBy: 'test' });
      const row = await store.prisma.apiToken.findUnique({ where: { id: id! } });
      expect(JSON.stringify(row)).not.toContain(secret);

      expect(await tokenPrincipal(store, token, '203.0.113.5')).toEqual({
        name: record.name,
        role: 'operator',
        method: 'token',
        userId: null,
        tokenId: id,
        sessionId: null,
        address: '203.0.113.5',
      });
    });

    it('records its use, at most once a minute', async () => {
      const { token, record } = await create('viewer');
      const lastUsed = async (now: Date) => {
        await tokenPrincipal(store, token, '203.0.113.5', now);
        return (await store.prisma.apiToken.findUnique({ where: { id: record.id } }))!.lastUsedAt?.getTime();
      };
      const start = new Date();
      expect(await lastUsed(start)).toBe(start.getTime());
      expect(await lastUsed(at(start, 30_000))).toBe(start.getTime());
      expect(await lastUsed(at(start, 60_000))).toBe(start.getTime() + 60_000);
    });

    it("a user's token acts with the lower of its role and the user's current role", async () => {
      for (const [tokenRole, userRole, expected] of [
        ['admin', 'viewer', 'viewer'],
        ['viewer', 'admin', 'viewer'],
        ['admin', 'operator', 'operator'],
        ['operator', 'admin', 'operator'],
        ['admin', 'admin', 'admin'],
      ] as const) {
        const user = await newUser(userRole);
        const { token } = await create(tokenRole, { userId: user.id });
        const principal = await tokenPrincipal(store, token, '203.0.113.5');
        expect(principal.role, `token ${tokenRole}, user ${userRole}`).toBe(expected);
        expect(principal.userId).toBe(user.id);
      }
      // The user's role as it is now: demoting the user demotes the token at once.
      const user = await newUser('admin');
      const { token } = await create('admin', { userId: user.id });
      await updateUser(store, user.id, { role: 'viewer' });
      expect((await tokenPrincipal(store, token, '203.0.113.5')).role).toBe('viewer');
    });

    it('refuses an expired, revoked, unknown or wrong-secret token with 401 invalid_token', async () => {
      const start = new Date();
      const expiring = await create('admin', { expiresAt: at(start, 3600_000) });
      expect((await tokenPrincipal(store, expiring.token, '203.0.113.5', at(start, 3599_000))).role).toBe('admin');
      await expectInvalid(expiring.token, at(start, 3600_000));
      const expired = await create('admin', { expiresAt: new Date(Date.now() - 1_000) });
      await expectInvalid(expired.token);

      const revoked = await create('admin');
      expect(await revokeApiToken(store, revoked.record.name, new Date())).toBe(1);
      await expectInvalid(revoked.token);
      expect(await revokeApiToken(store, revoked.record.id, new Date())).toBe(0);

      const live = await create('admin');
      const [, id, secret] = live.token.split('_');
      await expectInvalid(`lh_${randomBytes(8).toString('hex')}_${secret}`); // unknown id
      const otherSecret = (await create('admin')).token.split('_')[2];
      await expectInvalid(`lh_${id}_${otherSecret}`); // the right id, another token's secret
      await expectInvalid(`lh_${id}_${secret!.slice(0, -1)}${secret!.endsWith('A') ? 'B' : 'A'}`);
      // The live one still works.
      expect((await tokenPrincipal(store, live.token, '203.0.113.5')).role).toBe('admin');
    });

    it.each([
      ['empty', ''],
      ['the prefix alone', 'lh_'],
      ['one character too many', 'TOKEN+x'],
      ['one character too few', 'TOKEN-1'],
      ['an upper-case id', 'UPPER'],
      ['another prefix', 'LH_'],
      ['standard base64', 'PLUS'],
      ['padded with blanks', ' TOKEN '],
    ])('refuses a malformed token (%s) with 401', async (_label, form) => {
      const { token } = await create('viewer');
      const text =
        form === 'TOKEN+x' ? `${token}x`
        : form === 'TOKEN-1' ? token.slice(0, -1)
        : form === 'UPPER' ? token.replace(/^lh_([0-9a-f]+)/, (_m, id: string) => `lh_${id.toUpperCase().replace(/^[0-9]/, 'A')}`)
        : form === 'LH_' ? token.replace(/^lh_/, 'LH_')
        : form === 'PLUS' ? `${token.slice(0, -1)}+`
        : form === ' TOKEN ' ? ` ${token} `
        : form;
      await expectInvalid(text);
    });

    it("refuses the token of a disabled user", async () => {
      const user = await newUser('admin');
      const { token } = await create('viewer', { userId: user.id });
      expect((await tokenPrincipal(store, token, '203.0.113.5')).role).toBe('viewer');
      await store.prisma.user.update({ where: { id: user.id }, data: { disabledAt: new Date() } });
      await expectInvalid(token);
    });
  });

  describe('authenticate', () => {
    const headers = (values: Record<string, string>) => new Headers({ [PEER_HEADER]: '203.0.113.9', ...values });

    it('a bearer token wins over a session cookie, and an invalid one is refused rather than falling back', async () => {
      const admin = await newUser('admin');
      const { cookieValue } = await startSession(store, AUTH, admin, 'password', '203.0.113.9');
      const { token, record } = await createToken(store, { name: `t-${uid()}`, role: 'viewer', expiresAt: null, userId: null, createdBy: 'test' });
      const cookie = `${PLAIN_SESSION_COOKIE}=${cookieValue}`;

      expect(await authenticate(store, withAnonymous('viewer'), headers({ authorization: `Bearer ${token}`, cookie }))).toMatchObject({
        name: record.name,
        role: 'viewer',
        method: 'token',
        address: '203.0.113.9',
      });
      expect(await authenticate(store, BASE, headers({ authorization: `bearer   ${token} `, cookie }))).toMatchObject({ method: 'token' });
      await revokeApiToken(store, record.id, new Date());
      expect(await refusal(authenticate(store, withAnonymous('viewer'), headers({ authorization: `Bearer ${token}`, cookie })))).toMatchObject({ status: 401, code: 'invalid_token' });
      expect(await refusal(authenticate(store, BASE, headers({ authorization: 'Token abc', cookie })))).toMatchObject({ status: 401, code: 'invalid_token' });
      // Without the header, the cookie.
      expect(await authenticate(store, BASE, headers({ cookie }))).toMatchObject({ name: admin.name, role: 'admin', method: 'password', sessionId: sha256(cookieValue) });
    });

    it('a cookie that names no live session counts as no cookie: anonymous if allowed, else nobody', async () => {
      const user = await newUser('operator');
      const { cookieValue } = await startSession(store, AUTH, user, 'password', '203.0.113.9');
      const garbage = `${PLAIN_SESSION_COOKIE}=not-a-session`;
      const anonymous = { name: 'anonymous', role: 'viewer', method: 'anonymous', userId: null, tokenId: null, sessionId: null, address: '203.0.113.9' };
      expect(await authenticate(store, withAnonymous('viewer'), headers({ cookie: garbage }))).toEqual(anonymous);
      expect(await authenticate(store, withAnonymous('none'), headers({ cookie: garbage }))).toBeNull();
      expect(await authenticate(store, withAnonymous(undefined), headers({ cookie: garbage }))).toBeNull();

      // A bad __Host- cookie does not hide a good plain one, and the first of a name wins.
      const both = `${SECURE_SESSION_COOKIE}=${'A'.repeat(43)}; ${PLAIN_SESSION_COOKIE}=${cookieValue}`;
      expect(await authenticate(store, BASE, headers({ cookie: both }))).toMatchObject({ name: user.name, method: 'password' });
      expect(await authenticate(store, BASE, headers({ cookie: `${SECURE_SESSION_COOKIE}=${cookieValue}; ${SECURE_SESSION_COOKIE}=junk` }))).toMatchObject({ name: user.name });

      // Signed out, then the same cookie again: anonymous.
      await deleteUserSessions(store, user.id);
      expect(await authenticate(store, withAnonymous('viewer'), headers({ cookie: `${PLAIN_SESSION_COOKIE}=${cookieValue}` }))).toEqual(anonymous);
    });
  });

  describe('managing users and tokens', () => {
    /** Leaves exactly `admins` as the enabled admins of the store (every test above made some). */
    async function onlyAdmins(...admins: UserRecord[]) {
      await store.prisma.user.updateMany({ where: { role: 'admin', disabledAt: null, id: { notIn: admins.map((a) => a.id) } }, data: { disabledAt: new Date() } });
    }
    const by: Principal = { name: 'root', role: 'admin', method: 'password', userId: null, tokenId: null, sessionId: null, address: '203.0.113.9' };

    it('the last enabled admin cannot be demoted or disabled; with another admin, they can', async () => {
      const first = await addUser(store, { name: `admin-${uid()}`, role: 'admin', password: PASSWORD });
      await onlyAdmins(await store.prisma.user.findUniqueOrThrow({ where: { id: first.id } }));
      for (const change of [{ role: 'operator' as const }, { role: 'viewer' as const }, { disabled: true }, { role: 'viewer' as const, disabled: true }]) {
        const error = await refusal(changeUser(store, first.id, change));
        expect(error, JSON.stringify(change)).toMatchObject({ status: 422, code: 'last_admin' });
        expect(error.message).toContain(first.name);
      }
      expect(await store.prisma.user.findUnique({ where: { id: first.id } })).toMatchObject({ role: 'admin', disabledAt: null });
      // What does not demote is allowed.
      expect(await changeUser(store, first.id, { role: 'admin', disabled: false })).toMatchObject({ role: 'admin' });

      // A disabled admin does not count.
      const disabled = await createUser(store, { name: `admin-${uid()}`, role: 'admin', passwordHash });
      await store.prisma.user.update({ where: { id: disabled.id }, data: { disabledAt: new Date() } });
      expect(await refusal(changeUser(store, first.id, { disabled: true }))).toMatchObject({ status: 422 });

      const second = await addUser(store, { name: `admin-${uid()}`, role: 'admin', password: PASSWORD });
      const firstSession = await startSession(store, AUTH, (await store.prisma.user.findUniqueOrThrow({ where: { id: first.id } })), 'password', '203.0.113.9');
      expect(await changeUser(store, first.id, { disabled: true })).toMatchObject({ role: 'admin', disabledAt: expect.any(String) });
      // Disabling ended the first admin's sessions.
      expect(await resolve(firstSession.cookieValue)).toBeNull();
      // Now the second is the last.
      expect(await refusal(changeUser(store, second.id, { role: 'operator' }))).toMatchObject({ status: 422, code: 'last_admin' });
      expect(await changeUser(store, first.id, { disabled: false })).toMatchObject({ disabledAt: null });
      expect(await changeUser(store, second.id, { role: 'operator', password: 'a-new-password-99' })).toMatchObject({ role: 'operator' });
      const demoted = await store.prisma.user.findUniqueOrThrow({ where: { id: second.id } });
      expect(await verifyPassword('a-new-password-99', demoted.passwordHash)).toBe(true);
    });

    it('two admins demoting each other at once: one wins, one is refused, one admin is left', async () => {
      for (let round = 0; round < 3; round++) {
        const a = await addUser(store, { name: `admin-${uid()}`, role: 'admin', password: PASSWORD });
        const b = await addUser(store, { name: `admin-${uid()}`, role: 'admin', password: PASSWORD });
        await onlyAdmins(...(await store.prisma.user.findMany({ where: { id: { in: [a.id, b.id] } } })));
        const results = await Promise.allSettled([changeUser(store, a.id, { role: 'viewer' }), changeUser(store, b.id, { disabled: true })]);
        expect(results.map((r) => r.status).sort(), `round ${round}`).toEqual(['fulfilled', 'rejected']);
        const rejected = results.find((r) => r.status === 'rejected')!;
        expect(rejected.reason).toMatchObject({ status: 422, code: 'last_admin' });
        expect(await store.prisma.user.count({ where: { role: 'admin', disabledAt: null } })).toBe(1);
      }
    });

    it('addUser refuses a weak password (400) and a name in use (409), and stores nothing', async () => {
      const name = `u-${uid()}`;
      for (const password of ['short', ' padded-password-1', 'x'.repeat(1025)]) {
        expect(await refusal(addUser(store, { name, role: 'viewer', password }))).toMatchObject({ status: 400, code: 'weak_password' });
      }
      expect(await store.prisma.user.findUnique({ where: { name } })).toBeNull();
      const made = await addUser(store, { name, role: 'viewer', password: PASSWORD });
      expect(made).toMatchObject({ name, role: 'viewer', signsInWith: 'password', disabledAt: null });
      expect(JSON.stringify(made)).not.toContain('scrypt');
      const clash = await refusal(addUser(store, { name, role: 'admin', password: 'another-password-1' }));
      expect(clash).toMatchObject({ status: 409, code: 'user_exists' });
      expect(await store.prisma.user.findUniqueOrThrow({ where: { name } })).toMatchObject({ role: 'viewer' });
      // changeUser checks a new password the same way.
      expect(await refusal(changeUser(store, made.id, { password: 'short' }))).toMatchObject({ status: 400, code: 'weak_password' });
      expect(await refusal(changeUser(store, 'no-such-id', { role: 'viewer' }))).toMatchObject({ status: 404 });
    });

    it('addToken refuses a name in use (409), a revoked token\'s too; removeToken twice is 404', async () => {
      const name = `ci-${uid()}`;
      const made = await addToken(store, { name, role: 'viewer', expiresInDays: 30 }, by);
      expect(made.token).toMatch(/^lh_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
      expect(made).toMatchObject({ name, role: 'viewer', createdBy: 'root', revokedAt: null });
      expect(Math.abs(new Date(made.expiresAt!).getTime() - (Date.now() + 30 * 86_400_000))).toBeLessThan(60_000);
      expect(await refusal(addToken(store, { name, role: 'admin' }, by))).toMatchObject({ status: 409, code: 'token_exists' });
      await removeToken(store, made.id);
      await expect(tokenPrincipal(store, made.token, '203.0.113.9')).rejects.toMatchObject({ status: 401 });
      expect(await refusal(removeToken(store, made.id))).toMatchObject({ status: 404 });
      expect(await refusal(addToken(store, { name, role: 'viewer' }, by))).toMatchObject({ status: 409, code: 'token_exists' });
    });
  });
});

describe('signing in (limits on failures)', () => {
  const logs = globalThis as typeof globalThis & { __leaseholdLog?: Logger };
  let db: TestDatabase;
  let store: Store;
  let log = '';
  beforeAll(async () => {
    db = await createPostgresDatabase();
    store = await openStore(db.storeConfig());
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });
  // The failures are counted in the store (lib/db/sign-in-limits.ts): each test starts with none, as on a fresh store.
  beforeEach(async () => {
    await store.prisma.signInLimit.deleteMany();
    log = '';
    logs.__leaseholdLog = createLogger({ level: 'info', destination: { write: (chunk: string) => void (log += chunk) } });
  });
  afterEach(() => {
    delete logs.__leaseholdLog;
  });

  const address = () => `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
  const user = async (role: Role = 'viewer') => createUser(store, { name: `s-${uid()}`, role, passwordHash });
  const attempt = (name: string, password: string, from: string) => signIn(store, BASE, name, password, from);
  const lines = () => log.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);

  it('the right password signs in; a wrong one, no such user and a disabled user get the same 401; the log never has the password', async () => {
    const alice = await user('operator');
    const from = address();
    const result = await attempt(alice.name, PASSWORD, from);
    expect(result.user.id).toBe(alice.id);
    expect(await sessionPrincipal(store, AUTH, result.cookieValue, from)).toMatchObject({ name: alice.name, role: 'operator', method: 'password' });

    const disabled = await user();
    await updateUser(store, disabled.id, { disabled: true });
    const wrong = 'Wrong-Password-Guess-7';
    const refusals = [
      await refusal(attempt(alice.name, wrong, from)),
      await refusal(attempt(`nobody-${uid()}`, wrong, from)),
      await refusal(attempt(disabled.name, PASSWORD, from)),
    ];
    for (const error of refusals) expect({ status: error.status, code: error.code, message: error.message }).toEqual({ status: 401, code: 'sign_in_failed', message: 'The name or the password is wrong.' });

    expect(log).not.toContain(PASSWORD);
    expect(log).not.toContain(wrong);
    const failed = lines().filter((line) => line.msg === 'sign-in failed');
    expect(failed.map((line) => [line.user, line.address, line.reason, line.area])).toEqual([
      [alice.name, from, 'wrong password', 'auth'],
      [expect.stringMatching(/^nobody-/), from, 'no such user', 'auth'],
      [disabled.name, from, 'disabled', 'auth'],
    ]);
    expect(lines().filter((line) => line.msg === 'signed in').map((line) => [line.user, line.address])).toEqual([[alice.name, from]]);
  });

  it(`after ${FAILURES_PER_USER} wrong passwords for a name, the next attempt is 429 with Retry-After, even with the right password`, async () => {
    const bob = await user();
    const from = address();
    for (let i = 0; i < FAILURES_PER_USER; i++) {
      // The name in another case is the same name to the limit.
      const name = i % 2 ? bob.name.toUpperCase() : bob.name;
      expect(await refusal(attempt(name, `wrong-password-${i}`, from))).toMatchObject({ status: 401 });
    }
    const limited = await refusal(attempt(bob.name, PASSWORD, from));
    expect(limited).toMatchObject({ status: 429, code: 'too_many_attempts' });
    const retryAfter = Number(limited.headers?.['Retry-After']);
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 15 * 60).toBe(true);
    expect(limited.message).toContain(`${retryAfter} s`);
    expect(await store.prisma.session.count({ where: { userId: bob.id } })).toBe(0);
  });

  it('another address does not reset the per-user limit', async () => {
    const carol = await user();
    for (let i = 0; i < FAILURES_PER_USER; i++) await refusal(attempt(carol.name, `wrong-password-${i}`, `192.0.2.${i + 1}`));
    expect(await refusal(attempt(carol.name, PASSWORD, '192.0.2.200'))).toMatchObject({ status: 429 });
  });

  it(`${FAILURES_PER_ADDRESS} failures from one address, each for another name, stop that address for a new name`, async () => {
    const from = address();
    for (let i = 0; i < FAILURES_PER_ADDRESS; i++) expect(await refusal(attempt(`guess-${uid()}`, 'wrong-password-1', from))).toMatchObject({ status: 401 });
    const dave = await user();
    expect(await refusal(attempt(dave.name, PASSWORD, from))).toMatchObject({ status: 429, code: 'too_many_attempts' });
    // Only that address: dave from elsewhere is fine.
    expect((await attempt(dave.name, PASSWORD, '192.0.2.77')).user.id).toBe(dave.id);
  });

  it("a success resets the user's failures, and does not count against the address", async () => {
    const erin = await user();
    const from = address();
    for (const round of [1, 2]) {
      for (let i = 0; i < FAILURES_PER_USER - 1; i++) await refusal(attempt(erin.name, `wrong-password-${round}-${i}`, from));
      expect((await attempt(erin.name, PASSWORD, from)).user.id, `round ${round}`).toBe(erin.id);
    }
    // 2 x 4 failures and 2 successes so far from this address: 12 more failures are allowed, not 10.
    for (let i = 0; i < FAILURES_PER_ADDRESS - 2 * (FAILURES_PER_USER - 1); i++) {
      expect(await refusal(attempt(`guess-${uid()}`, 'wrong-password-2', from)), `failure ${i}`).toMatchObject({ status: 401 });
    }
    expect(await refusal(attempt(erin.name, PASSWORD, from))).toMatchObject({ status: 429 });
  });

  it('attempts sent at once cannot all be checked: past the limit they are 429 before any password is checked', async () => {
    const frank = await user();
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => attempt(frank.name, `wrong-password-${i}`, `192.0.2.${100 + i}`).then(() => 200, (e: unknown) => (e as AuthError).status)),
    );
    expect(results.filter((status) => status === 401)).toHaveLength(FAILURES_PER_USER);
    expect(results.filter((status) => status === 429)).toHaveLength(12 - FAILURES_PER_USER);
    expect(await refusal(attempt(frank.name, PASSWORD, address()))).toMatchObject({ status: 429 });
  });

  it('two console processes of one store share the allowance: failures in one count in the other', async () => {
    const henry = await user();
    const run = (count: number, from: string, password = 'wrong-password') =>
      new Promise<number[]>((done, fail) => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'tests/support/sign-in-process.ts', (db.storeConfig() as { url: string }).url, henry.name, String(count), from, password], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
        child.on('error', fail);
        child.on('close', (code) => {
          try {
            if (code !== 0) throw new Error(`sign-in process exited ${code}: ${err.slice(-2000)}`);
            done(JSON.parse(out) as number[]);
          } catch (error) {
            fail(error as Error);
          }
        });
      });
    // Three failures in one process, two in the other, from other addresses: the name's five are used up.
    expect(await run(3, '192.0.2.31')).toEqual([401, 401, 401]);
    expect(await run(2, '192.0.2.32')).toEqual([401, 401]);
    // Now neither process, nor this one, lets the right password through.
    expect(await run(1, '192.0.2.33', PASSWORD)).toEqual([429]);
    expect(await refusal(attempt(henry.name, PASSWORD, address()))).toMatchObject({ status: 429 });
  });

  it('a store that cannot answer is not a failed attempt', async () => {
    const grace = await user();
    const from = address();
    // The store takes the attempt, then fails to find the user.
    const failing = { findUnique: () => Promise.reject(new Error('the store is down')) };
    const prisma = new Proxy(store.prisma, {
      get: (client, key) => {
        if (key === 'user') return failing;
        const value: unknown = Reflect.get(client, key);
        return typeof value === 'function' ? value.bind(client) : value;
      },
    });
    const down = { ...store, prisma } as Store;
    for (let i = 0; i < FAILURES_PER_USER + 2; i++) await expect(signIn(down, BASE, grace.name, PASSWORD, from)).rejects.toThrow('the store is down');
    expect((await attempt(grace.name, PASSWORD, from)).user.id).toBe(grace.id);
  });
});

/** The CLI with `input` on its standard input (not a terminal: readSecret reads it to the end). */
function cliWithInput(args: string[], input: string, env: Record<string, string | undefined>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/leasehold.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

describe('the CLI on the embedded store', () => {
  let dir: { dataDir: string; remove(): void };
  let env: Record<string, string | undefined>;
  beforeAll(async () => {
    dir = await freshPgliteDirectory();
    env = { DATABASE_URL: undefined, LEASEHOLD_CONFIG: undefined, LEASEHOLD_DATA_DIR: dir.dataDir };
  });
  afterAll(() => dir?.remove());

  /** The store as the CLI left it (closed again before the next command: one process at a time). */
  async function inStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
    const store = await openStore({ kind: 'pglite', dataDir: dir.dataDir });
    try {
      return await work(store);
    } finally {
      await store.close();
    }
  }

  const ADMIN_PASSWORD = 'cli-admin-password-1';

  it('users add NAME --role admin takes the password from standard input, and never prints it', async () => {
    const added = await cliWithInput(['users', 'add', 'ops-admin', '--role', 'admin'], `${ADMIN_PASSWORD}\n`, env);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    expect(added.stdout).toBe('user ops-admin added with the role admin\n');

    const again = await cliWithInput(['users', 'add', 'ops-admin', '--role', 'viewer'], 'another-password-1\n', env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('A user named "ops-admin" already exists.');

    const stored = await inStore((store) => store.prisma.user.findUniqueOrThrow({ where: { name: 'ops-admin' } }));
    expect(stored).toMatchObject({ role: 'admin', disabledAt: null });
    expect(stored.passwordHash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(await verifyPassword(ADMIN_PASSWORD, stored.passwordHash)).toBe(true);
    expect(`${added.stdout}${added.stderr}${again.stdout}${again.stderr}`).not.toContain(ADMIN_PASSWORD);
  });

  it('refuses a weak password from standard input, before touching the store', async () => {
    for (const [input, message] of [
      ['short\n', 'leasehold: a password must have at least 12 characters'],
      ['', 'leasehold: a password must have at least 12 characters'],
      [' padded-password-1\n', 'leasehold: a password may not begin or end with spaces'],
    ] as const) {
      const result = await cliWithInput(['users', 'add', 'weak-user', '--role', 'viewer'], input, env);
      expect(result.code, JSON.stringify(input)).toBe(1);
      expect(result.stderr.trim()).toBe(message);
    }
    expect(await inStore((store) => store.prisma.user.findUnique({ where: { name: 'weak-user' } }))).toBeNull();
  });

  it('a password given as an argument is refused, whatever standard input holds, and no user is made', async () => {
    const argument = 'argument-password-1';
    for (const input of ['', 'stdin-password-12\n']) {
      const refused = await cliWithInput(['users', 'add', 'arg-user', argument, '--role', 'viewer'], input, env);
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim()).toBe('leasehold: users add takes one user name; the password comes from a prompt or standard input, never an argument');
      expect(refused.stderr).not.toContain(argument);
    }
    expect(await inStore((store) => store.prisma.user.findUnique({ where: { name: 'arg-user' } }))).toBeNull();
  });

  it('tokens create --json prints a token the server accepts; tokens revoke makes it 401', async () => {
    const created = await cliWithInput(['tokens', 'create', '--name', 'prometheus', '--role', 'viewer', '--json'], '', env);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const printed = JSON.parse(created.stdout) as { token: string; name: string; role: string; expiresAt: string | null; createdBy: string; prefix: string };
    expect(printed).toMatchObject({ name: 'prometheus', role: 'viewer', expiresAt: null, createdBy: 'cli' });
    expect(printed.token).toMatch(/^lh_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(printed.prefix).toBe(printed.token.slice(0, 10));
    expect(await inStore((store) => tokenPrincipal(store, printed.token, '127.0.0.1'))).toMatchObject({ name: 'prometheus', role: 'viewer', method: 'token' });

    const clash = await cliWithInput(['tokens', 'create', '--name', 'prometheus', '--role', 'admin'], '', env);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain('A token named "prometheus" already exists');

    const revoked = await cliWithInput(['tokens', 'revoke', 'prometheus'], '', env);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toBe('token prometheus revoked\n');
    const error = await inStore((store) => tokenPrincipal(store, printed.token, '127.0.0.1').catch((e: unknown) => e));
    expect(error).toMatchObject({ status: 401, code: 'invalid_token' });
    const twice = await cliWithInput(['tokens', 'revoke', 'prometheus'], '', env);
    expect(twice.code).toBe(1);
    expect(twice.stderr.trim()).toBe('leasehold: no token "prometheus" that is not revoked already');
  });

  it('tokens create --expires takes at least a minute; a user token acts with at most the user\'s role', async () => {
    for (const expires of ['1s', '59s', '500ms', 'soon', '-5m']) {
      const result = await cliWithInput(['tokens', 'create', '--name', `short-${uid()}`, '--role', 'viewer', `--expires=${expires}`], '', env);
      expect(result.code, expires).toBe(1);
      expect(result.stderr, expires).toContain('--expires must be a duration of at least a minute');
    }
    expect((await cliWithInput(['users', 'add', 'arg-user', '--role', 'viewer'], 'stdin-password-12\n', env)).code).toBe(0);
    const started = Date.now();
    const made = await cliWithInput(['tokens', 'create', '--name', 'bound', '--role', 'admin', '--expires', '1m', '--user', 'arg-user', '--json'], '', env);
    expect(made.code).toBe(0);
    const printed = JSON.parse(made.stdout) as { token: string; user: string | null; expiresAt: string };
    expect(Math.abs(new Date(printed.expiresAt).getTime() - (started + 60_000))).toBeLessThan(30_000);
    await inStore(async (store) => {
      // arg-user is a viewer: the admin token acts as a viewer, and not at all after it expires.
      expect((await tokenPrincipal(store, printed.token, '127.0.0.1')).role).toBe('viewer');
      await expect(tokenPrincipal(store, printed.token, '127.0.0.1', new Date(printed.expiresAt))).rejects.toMatchObject({ status: 401 });
      expect(await store.prisma.apiToken.count({ where: { name: { startsWith: 'short-' } } })).toBe(0);
    });
  });
});

// Every route handler and page of app/, found from the files, called as every kind of caller:
// nobody, a viewer, an operator and an admin (by token and by cookie), a reporter (a token
// that may only post telemetry), an expired token, a
// revoked token, and a cookie-signed request from another origin. What each may do is
// lib/auth/route-rules.ts: a route or method without a rule there fails this test, and so does
// a rule that no longer names a route. Runs against the postgres server, which has no
// anonymous access (tests/e2e/serve.ts).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { POSTGRES_URL } from '../../playwright.config';
import { ROUTE_RULES, type Rule } from '../../lib/auth/route-rules';
import { can } from '../../lib/auth/permissions';
import type { PersonRole, Role } from '../../lib/domain/roles';
import { credentials } from './credentials';

const APP = path.resolve('app');
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

type Route = { key: string; method: string; path: string; page: boolean; notAllowed: boolean };

/** "app/(console)/leases/[...id]/page.tsx" -> "/leases/[...id]". */
function routePath(file: string): string {
  const dir = path.relative(APP, path.dirname(file)).split(path.sep).filter((part) => part && !/^\(.*\)$/.test(part));
  return `/${dir.join('/')}`;
}

function appRoutes(): Route[] {
  const found: Route[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name === 'route.ts') {
        const text = readFileSync(full, 'utf8');
        for (const method of METHODS) {
          const exported = new RegExp(`export (?:async )?function ${method}\\b|export const ${method}\\b`).test(text);
          if (!exported) continue;
          const notAllowed = new RegExp(`export const ${method} = notAllowed`).test(text);
          found.push({ key: `${method} ${routePath(full)}`, method, path: routePath(full), page: false, notAllowed });
        }
      } else if (name === 'page.tsx') found.push({ key: `PAGE ${routePath(full)}`, method: 'GET', path: routePath(full), page: true, notAllowed: false });
    }
  };
  walk(APP);
  return found;
}

/** A concrete URL for a route's pattern, and a body that gets past its shape check. */
function concrete(route: Route): { url: string; body?: string } {
  const leaseId = encodeURIComponent('pg-e2e/no-such-table/no-such-lease');
  const url = route.path
    .replace('[...missing]', 'no-such-route')
    .replace('[...id]', leaseId)
    .replace('[id]', 'no-such-id')
    .replace('[...path]', route.method === 'POST' ? `${leaseId}/force-expire` : leaseId);
  if (route.method === 'GET') return { url };
  if (route.key === 'POST /api/v1/leases/[...path]') return { url, body: JSON.stringify({ expectedHolder: 'w-1', expectedToken: '1', reason: 'role matrix test, nothing to do' }) };
  if (route.key === 'POST /api/v1/demo') return { url, body: '{"faults":false}' };
  return { url, body: '{}' };
}

type Caller = { name: string; role: Role | null; headers: Record<string, string>; cookie: boolean; valid: boolean };

test.describe('the role matrix', () => {
  test.use({ baseURL: POSTGRES_URL });
  const routes = appRoutes();

  test('every route and method of the app has a rule, and every rule names one', () => {
    const keys = new Set(routes.filter((r) => !r.notAllowed).map((r) => r.key));
    const missing = [...keys].filter((key) => !(key in ROUTE_RULES));
    expect(missing, 'routes without a rule in lib/auth/route-rules.ts').toEqual([]);
    const stale = Object.keys(ROUTE_RULES).filter((key) => !keys.has(key));
    expect(stale, 'rules that name no route').toEqual([]);
    expect(keys.size).toBeGreaterThan(25);
  });

  test('every route answers each caller as its rule says', async () => {
    test.setTimeout(240_000);
    const creds = credentials(POSTGRES_URL);
    // Each sign-in on its own (no cookie jar): a sign-in ends the session its request carried.
    const cookieOf = async (role: PersonRole) => {
      const response = await fetch(`${POSTGRES_URL}/api/v1/auth/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(creds.users[role]) });
      expect(response.status, `sign-in as ${role}`).toBe(200);
      return /^[^;]+/.exec(response.headers.get('set-cookie')!)![0];
    };
    const callers: Caller[] = [
      { name: 'anonymous', role: null, headers: {}, cookie: false, valid: true },
      { name: 'expired token', role: null, headers: { Authorization: `Bearer ${creds.tokens.expired}` }, cookie: false, valid: false },
      { name: 'revoked token', role: null, headers: { Authorization: `Bearer ${creds.tokens.revoked}` }, cookie: false, valid: false },
      ...(['viewer', 'operator', 'admin', 'reporter'] as const).map((role) => ({ name: `${role} token`, role, headers: { Authorization: `Bearer ${creds.tokens[role]}` }, cookie: false, valid: true })),
    ];
    for (const role of ['viewer', 'operator', 'admin'] as const) {
      const cookie = await cookieOf(role);
      callers.push({ name: `${role} cookie`, role, headers: { Cookie: cookie, Origin: POSTGRES_URL }, cookie: true, valid: true });
      callers.push({ name: `${role} cookie from another origin`, role, headers: { Cookie: cookie, Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' }, cookie: true, valid: true });
    }
    const failures: string[] = [];
    let checked = 0;
    // Signing out ends the callers' sessions: last.
    const order = (route: Route) => (route.key === 'POST /api/v1/auth/logout' ? 1 : 0);
    for (const route of routes.filter((r) => !r.notAllowed).sort((a, b) => order(a) - order(b))) {
      const rule = ROUTE_RULES[route.key as keyof typeof ROUTE_RULES] as Rule;
      const { url, body } = concrete(route);
      for (const caller of callers) {
        const unsafe = route.method !== 'GET';
        const headers: Record<string, string> = { ...caller.headers, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) };
        const controller = new AbortController();
        const response = await fetch(`${POSTGRES_URL}${url}`, { method: route.method, headers, body, redirect: 'manual', signal: controller.signal });
        const status = response.status;
        const text = route.path === '/api/v1/stream' && status === 200 ? '' : await response.text();
        controller.abort();
        const code = /"error":"([a-z_]+)"/.exec(text)?.[1] ?? null;
        let expected: string;
        let ok: boolean;
        if (caller.cookie && unsafe && caller.headers.Origin !== POSTGRES_URL) {
          expected = '403 cross_origin';
          ok = status === 403 && code === 'cross_origin';
        } else if (rule === 'public') {
          // A public route may still say that a token it was sent is no good (GET /api/v1/auth/me).
          expected = 'not refused';
          const refusals = caller.valid ? ['unauthenticated', 'forbidden', 'invalid_token', 'cross_origin'] : ['unauthenticated', 'forbidden', 'cross_origin'];
          ok = !refusals.includes(code ?? '') && status !== 500;
        } else if (!caller.valid) {
          expected = route.page ? 'redirect to /login' : '401 invalid_token';
          ok = route.page ? status === 307 && /\/login\?next=/.test(response.headers.get('location') ?? '') : status === 401 && code === 'invalid_token';
        } else if (caller.role === null) {
          expected = route.page ? 'redirect to /login' : '401 unauthenticated';
          ok = route.page ? status === 307 && /\/login\?next=/.test(response.headers.get('location') ?? '') : status === 401 && code === 'unauthenticated';
        } else if (!can(caller.role, rule)) {
          expected = route.page ? 'page saying "Not allowed"' : '403 forbidden';
          ok = route.page ? status === 200 && text.includes('Not allowed') : status === 403 && code === 'forbidden';
        } else {
          expected = 'served';
          ok = status < 500 && !['unauthenticated', 'forbidden', 'invalid_token', 'cross_origin'].includes(code ?? '') && !(route.page && text.includes('Not allowed'));
        }
        checked++;
        if (!ok) failures.push(`${route.method} ${url} as ${caller.name}: expected ${expected}, got ${status} ${code ?? ''}`);
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(300);
  });
});

// The rule of a page (route-rules.ts), for its server component: pageAccess('PAGE /audit')
// first thing. Nobody signed in (and no anonymous role): a redirect to the sign-in page, back
// here after. Signed in without the permission: the page shows why instead of its content.
import 'server-only';
import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { getConfig } from '../config';
import { getStore } from '../db';
import { LEASE_PATH_HEADER } from '../domain/lease-id';
import { forbidden } from './guard';
import { can } from './permissions';
import { authenticate, type Principal } from './principal';
import { ROUTE_RULES, type PageKey } from './route-rules';

export type PageAccess = { allowed: true; principal: Principal | null } | { allowed: false; principal: Principal; message: string };

/** The principal of the page's request, or null (a bearer token a browser does not send counts as none). */
export async function currentPrincipal(): Promise<Principal | null> {
  try {
    return await authenticate(await getStore(), getConfig(), await headers());
  } catch {
    return null;
  }
}

export async function pageAccess(page: PageKey, path?: string): Promise<PageAccess> {
  const rule = ROUTE_RULES[page];
  const principal = await currentPrincipal();
  if (rule === 'public') return { allowed: true, principal };
  if (principal === null) {
    const here = path ?? (await headers()).get(LEASE_PATH_HEADER) ?? page.slice('PAGE '.length);
    redirect(`/login?next=${encodeURIComponent(here)}`);
  }
  if (!can(principal.role, rule)) return { allowed: false, principal, message: forbidden(principal, rule).message };
  return { allowed: true, principal };
}

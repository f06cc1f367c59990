// The rule of a page (route-rules.ts), for its server component: pageAccess('PAGE /audit')
// first thing. Nobody signed in (and no anonymous role): a redirect to the sign-in page, back
// here after. Signed in without the permission: the page shows why instead of its content.
import 'server-only';
import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { getConfig } from '../root';
import { getStore } from '../root';
import { LEASE_PATH_HEADER } from '../domain/lease-id';
import { forbidden } from './guard';
import { can } from './permissions';
import { anonymousRole, authenticate, type Principal } from './principal';
import { clientAddress } from '../api/peer';
import { ROUTE_RULES, type PageKey } from './route-rules';

export type PageAccess = { allowed: true; principal: Principal | null } | { allowed: false; principal: Principal; message: string };

/** The principal of the page's request, or null (a bearer token a browser does not send counts as none). */
export async function currentPrincipal(): Promise<Principal | null> {
  const requestHeaders = await headers();
  try {
    return await authenticate(getStore, getConfig(), requestHeaders);
  } catch {
    // The session could not be checked (the store is down, or a bad token): what an anonymous
    // visitor may see, if anything; the page then says what it can of the store.
    try {
      const address = clientAddress(requestHeaders);
      const role = anonymousRole(getConfig(), address);
      return role ? { name: 'anonymous', role, method: 'anonymous', userId: null, tokenId: null, sessionId: null, address } : null;
    } catch {
      return null;
    }
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

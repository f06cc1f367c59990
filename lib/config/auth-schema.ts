// The config file's `auth` section: who may use this server without signing in, how long a
// sign-in lasts, and the optional OIDC provider (lib/auth/oidc.ts). Messages that begin
// with "expected" are used as they are by issues.ts.
import { z } from 'zod';
import { ROLES, type PersonRole, type Role } from '../domain/roles';

const role = z.enum(ROLES, { error: 'expected "viewer", "operator" or "admin"' });

const groups = z.array(z.string({ error: 'expected a group name (text)' }).min(1, { error: 'expected a group name (text)' }), {
  error: 'expected a list of group names',
});

export const oidcSchema = z.strictObject({
  /** The provider's issuer URL: its discovery document is `<issuer>/.well-known/openid-configuration`. */
  issuer: z.url({ protocol: /^https?$/, error: 'expected the provider\'s issuer URL (https://...)' }),
  clientId: z.string({ error: 'expected the client id registered at the provider' }).min(1, { error: 'expected the client id registered at the provider' }),
  /** Optional: a public client uses PKCE alone. Write it as "${ENV_VAR}" to keep it out of the file. */
  clientSecret: z.string().min(1, { error: 'expected the client secret (text), or no clientSecret field for a public client' }).optional(),
  /** Where the provider sends the browser back: this server's /api/v1/auth/oidc/callback as users reach it. */
  redirectUri: z.url({ protocol: /^https?$/, error: 'expected this server\'s callback URL, such as https://leasehold.example.com/api/v1/auth/oidc/callback' }),
  scopes: z.array(z.string()).default(['openid', 'profile', 'email']),
  /** The ID token / userinfo claim that lists the user's groups. */
  groupsClaim: z.string().min(1).default('groups'),
  /** The claim shown as the user's name (falls back to email, then the subject). */
  usernameClaim: z.string().min(1).default('preferred_username'),
  /** Which groups give which role; the highest matching role wins. A user in none of them is refused. */
  roles: z
    .strictObject({ admin: groups.default([]), operator: groups.default([]), viewer: groups.default([]) })
    .prefault({}),
  /** Allows an http:// issuer (a provider on this machine, in tests). Never in production. */
  allowInsecureIssuer: z.boolean().default(false),
  /** The button's label on the sign-in page. */
  label: z.string().min(1).max(60).default('Sign in with single sign-on'),
}).superRefine((oidc, ctx) => {
  if (oidc.issuer.startsWith('http://') && !oidc.allowInsecureIssuer) {
    ctx.addIssue({ code: 'custom', path: ['issuer'], message: `expected an https:// issuer (an http:// one only with "allowInsecureIssuer": true, for a provider on this machine), found "${oidc.issuer}"` });
  }
});

export const authSchema = z
  .strictObject({
    /**
     * The role of a request that is not signed in: "viewer" (read-only), or "none" (or null):
     * every page and route but the health checks needs a sign-in. Absent: none, except that the
     * embedded demo lets requests from this machine read without signing in.
     */
    anonymousRole: z.enum(['viewer', 'none'], { error: 'expected "viewer" or "none" (anonymous users may only ever read)' }).nullable().optional(),
    /** A session unused this long ends. */
    sessionIdleMinutes: z.number({ error: 'expected a number of minutes' }).int().min(5).max(7 * 24 * 60).default(12 * 60),
    /** A session ends this long after its sign-in, however used. */
    sessionMaxHours: z.number({ error: 'expected a number of hours' }).int().min(1).max(90 * 24).default(7 * 24),
    oidc: oidcSchema.optional(),
  })
  .prefault({});

export type { PersonRole, Role };
export { ROLES };
export type AuthConfig = z.output<typeof authSchema>;
export type OidcConfig = z.output<typeof oidcSchema>;
export { role as roleSchema };

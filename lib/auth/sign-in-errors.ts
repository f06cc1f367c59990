// Why a sign-in came back to the sign-in page: a code in its address (?error=), a sentence
// here. Only these sentences are shown: a link cannot put words of its own on the page.
export const SIGN_IN_ERRORS = {
  sso_not_configured: 'Single sign-on is not set up on this server.',
  sso_expired: 'The single sign-on took too long or was started elsewhere: start it again.',
  sso_no_role: 'Your account is in no group that gives a role here: an admin can map one (auth.oidc.roles).',
  sso_disabled: 'Your account is disabled here.',
  sso_unreachable: 'The single sign-on provider cannot be reached: try again, or sign in with a password.',
  sso_refused: 'The single sign-on provider did not sign you in.',
  sso_failed: 'Single sign-on failed; the server log says why.',
} as const;

export type SignInErrorCode = keyof typeof SIGN_IN_ERRORS;

/** The sentence for a code from the address, or null for anything else. */
export function signInErrorText(code: string | null | undefined): string | null {
  return code && Object.hasOwn(SIGN_IN_ERRORS, code) ? SIGN_IN_ERRORS[code as SignInErrorCode] : null;
}

// The session cookie. Over https it is `__Host-leasehold_session`: Secure, Path=/, no Domain,
// so no other host or path can set or read it. Over plain http (a console on
// 127.0.0.1, a first start) a browser refuses Secure and `__Host-` cookies, so it is
// `leasehold_session` there. Both HttpOnly and SameSite=Lax.

export const SECURE_SESSION_COOKIE = '__Host-leasehold_session';
export const PLAIN_SESSION_COOKIE = 'leasehold_session';
/** Read in this order. */
export const SESSION_COOKIES = [SECURE_SESSION_COOKIE, PLAIN_SESSION_COOKIE] as const;

/** Whether the browser reached this server over https: the request's own URL, or X-Forwarded-Proto from a proxy in front. */
export function isHttps(request: { url: string; headers: Headers }): boolean {
  if (new URL(request.url).protocol === 'https:') return true;
  return (request.headers.get('x-forwarded-proto') ?? '').split(',')[0]!.trim().toLowerCase() === 'https';
}

export function sessionCookie(value: string, https: boolean, maxAgeSeconds: number): string {
  const name = https ? SECURE_SESSION_COOKIE : PLAIN_SESSION_COOKIE;
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${https ? '; Secure' : ''}`;
}

/** Set-Cookie values that remove the session cookie, under both names. */
export function clearedSessionCookies(https: boolean): string[] {
  return [
    `${PLAIN_SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`,
    ...(https ? [`${SECURE_SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure`] : []),
  ];
}

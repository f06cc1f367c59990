// Where the sign-in page sends the browser after: a path of this server, never another site.

/** `next` when it is a path of this server ("/failovers?range=1h"), else "/". */
export function safeReturnPath(next: string | null | undefined): string {
  if (typeof next !== 'string' || next.length > 2000) return '/';
  // "//host" and "/\host" are other sites to a browser; control characters are not in a path.
  // eslint-disable-next-line no-control-regex -- control characters are what it refuses
  if (!next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\') || /[\u0000-\u001f\u007f]/.test(next)) return '/';
  return next;
}

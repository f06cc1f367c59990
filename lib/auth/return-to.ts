// Where the sign-in page sends the browser after: a path of this server, never another site.
import { CONTROL_CHARACTER } from '../domain/unprintable';

/** `next` when it is a path of this server ("/failovers?range=1h"), else "/". */
export function safeReturnPath(next: string | null | undefined): string {
  if (typeof next !== 'string' || next.length > 2000) return '/';
  // "//host" and "/\host" are other sites to a browser; control characters are not in a path.
  if (!next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\') || CONTROL_CHARACTER.test(next)) return '/';
  return next;
}

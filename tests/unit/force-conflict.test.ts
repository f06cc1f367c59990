// A force action refused because the lease changed names the key and the holder as the API
// shows them (exact text, escaped once), not escaped a second time.
import { describe, expect, it } from 'vitest';
import { ForceConflictError } from '../../lib/sources/force';

describe('ForceConflictError', () => {
  it.each([
    ['a holder with a NUL byte', 'lock:a', 'ctl\\x00', '"ctl\\x00"'],
    ['a key with a backslash', 'jobs\\\\nightly', 'w1', 'jobs\\\\nightly is not'],
    ['a bidi override, escaped in exact text', 'k', 'evil\\u202e', '"evil\\u202e"'],
  ])('%s: shown once escaped', (_name, key, holder, shown) => {
    const error = new ForceConflictError(key, { holder, token: '7' });
    expect(error.message).toContain(shown);
    expect(error.message).not.toContain('\\\\x00');
  });

  it('a 10 kB key is cut between escapes', () => {
    const error = new ForceConflictError('\\x00'.repeat(2_500), null);
    expect(error.message.startsWith(`${'\\x00'.repeat(29)}…`)).toBe(true);
  });
});

// A guarded action's body is checked once: the API parses it (forceBody, made of the contract's
// SEEN_FIELDS), and the request made from it (checkedRequest) is taken by the contract
// (checkRequest) as it is. A request made any other way is checked in full, as before.
import { describe, expect, it } from 'vitest';
import { forceBody } from '../../lib/admin/force-request';
import { checkedRequest, checkRequest, ForceNotPossibleError, MAX_EXACT_CHARS, type CheckedSeen } from '../../lib/sources/force';

const body = (more: Record<string, unknown> = {}) => forceBody.parse({ expectedHolder: 'worker-7', expectedToken: '42', reason: 'stuck since the deploy', ...more });

describe('the body of a guarded action, checked once', () => {
  it('the request made from a parsed body passes the contract as it is', () => {
    const request = checkedRequest('force-expire', 'lock:job', body());
    expect(request).toMatchObject({ action: 'force-expire', key: 'lock:job', expectedHolder: 'worker-7', expectedToken: '42', token: 42n });
    expect(checkRequest(request)).toBe(request);
  });

  it('takes the seen fields from the parsed body without checking them again (the brand says they were)', () => {
    // Only a parse can make a CheckedSeen; forged here to show the fields are not looked at twice.
    const forged = { expectedHolder: '', expectedToken: '7', quarantineMs: 5 } as unknown as CheckedSeen;
    expect(checkedRequest('force-release', 'k', forged).expectedHolder).toBe('');
  });

  it('still checks what is not the body: the key (from the store), and the action and its rule', () => {
    expect(() => checkedRequest('force-expire', 'k'.repeat(MAX_EXACT_CHARS + 1), body())).toThrow(/^key: a lease key as Leasehold reports it has at most/);
    expect(() => checkedRequest('force-expire', '', body())).toThrow(ForceNotPossibleError);
    expect(() => checkedRequest('force-expire', 'k', body({ expectedToken: null }))).toThrow(expect.objectContaining({ code: 'unfenced' }));
    expect(() => checkedRequest('force-nothing' as never, 'k', body())).toThrow(/the action is/);
  });

  it('a request not made from a parsed body is checked in full by the contract, as before', () => {
    expect(() => checkRequest({ action: 'force-expire', key: 'k', expectedHolder: 'w', expectedToken: 'x1' })).toThrow(/expectedToken/);
    // A copy of a checked request, changed or not, is not the checked request: checked again.
    const copy = { ...checkedRequest('force-expire', 'k', body()), expectedToken: 'not a number' };
    expect(() => checkRequest(copy)).toThrow(/expectedToken/);
    const same = { ...checkedRequest('force-expire', 'k', body()) };
    expect(checkRequest(same)).not.toBe(same);
    expect(checkRequest(same)).toMatchObject({ key: 'k', token: 42n });
  });
});

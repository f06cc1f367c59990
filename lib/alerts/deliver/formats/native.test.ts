import { describe, expect, it } from 'vitest';
import { buildNative } from './native';
import { CTX, hasLoneSurrogate, hostile, message } from './test-fixtures';

describe('native format', () => {
  it('is the AlertMessage as it is, to the endpoint URL', () => {
    const msg = message();
    const built = buildNative(msg, CTX);
    expect(built.url).toBe(CTX.endpointUrl);
    expect(JSON.parse(built.body)).toEqual(msg);
  });

  it('keeps a 2^70 token exact, writes a bigint in the detail as a decimal string, and stays encodable', () => {
    const msg = hostile();
    const body = JSON.parse(buildNative(msg, CTX).body);
    expect(body.alert.token).toBe('1180591620717411303424');
    expect(body.alert.detail.counter).toBe('1180591620717411303424');
    expect(body.alert.leaseKey).toBe(msg.alert.leaseKey);
    expect(hasLoneSurrogate(buildNative(msg, CTX).body)).toBe(false);
  });
});

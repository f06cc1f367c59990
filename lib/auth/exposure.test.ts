import { describe, expect, it } from 'vitest';
import { exposureWarning } from './exposure';

const config = (host: string, anonymousRole?: 'viewer' | 'none' | null) => ({ host, port: 3000, auth: { anonymousRole } }) as Parameters<typeof exposureWarning>[0];

describe('exposureWarning', () => {
  it('warns when anonymous reading is on and the server listens on every address, naming the risk and the way out', () => {
    const warning = exposureWarning(config('0.0.0.0', 'viewer'));
    expect(warning).toContain('listens on every address of this machine (HOST=0.0.0.0)');
    expect(warning).toContain('anyone who can reach port 3000 reads every lease, holder, fencing token');
    expect(warning).toContain('LEASEHOLD_ANONYMOUS_ROLE=none');
    expect(exposureWarning(config('::', 'viewer'))).toContain('every address');
    expect(exposureWarning(config('10.1.2.3', 'viewer'))).toContain('listens on 10.1.2.3');
  });

  it('says nothing on loopback, or when anonymous reading is off', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost']) expect(exposureWarning(config(host, 'viewer')), host).toBeNull();
    for (const role of ['none', null, undefined] as const) expect(exposureWarning(config('0.0.0.0', role))).toBeNull();
  });
});

// The security headers' values (lib/api/security-headers.ts) and next.config.js's copy of them
// for the routes proxy.ts does not see: held equal here, so the two cannot drift.
import { describe, expect, it } from 'vitest';
import { API_POLICY, COMMON_SECURITY_HEADERS, isPagePath, newNonce, pagePolicy, securityHeaders } from '../../lib/api/security-headers';

type HeaderRule = { source: string; headers: { key: string; value: string }[] };

describe('security headers', () => {
  it("next.config.js sends lib/api/security-headers.ts's values: the common ones everywhere, the API's policy on /api and /metrics", async () => {
    // next.config.js is plain JavaScript: imported by a path the compiler does not follow.
    const { default: nextConfig } = (await import('../../next.config.js' as string)) as { default: { headers(): Promise<HeaderRule[]> } };
    const rules = await nextConfig.headers();
    const of = (source: string) => Object.fromEntries(rules.find((rule) => rule.source === source)!.headers.map((h) => [h.key, h.value]));
    expect(of('/:path*')).toEqual(COMMON_SECURITY_HEADERS);
    expect(of('/api/:path*')).toEqual({ 'Content-Security-Policy': API_POLICY });
    expect(of('/metrics')).toEqual({ 'Content-Security-Policy': API_POLICY });
  });

  it('a page policy runs scripts by nonce only (never unsafe-inline), frames nothing, loads from nowhere else', () => {
    const policy = pagePolicy('abc', false);
    const scriptSrc = policy.split('; ').find((part) => part.startsWith('script-src'))!;
    expect(scriptSrc).toBe("script-src 'self' 'nonce-abc' 'strict-dynamic'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toContain("object-src 'none'");
    expect(policy).toContain("base-uri 'self'");
    expect(policy).not.toMatch(/https?:|\*/);
    expect(pagePolicy('abc', true)).toContain("'nonce-abc' 'strict-dynamic' 'unsafe-eval'");
  });

  it('a nonce is 16 random bytes, new each time', () => {
    const nonces = new Set(Array.from({ length: 100 }, newNonce));
    expect(nonces.size).toBe(100);
    for (const nonce of nonces) expect(Buffer.from(nonce, 'base64')).toHaveLength(16);
  });

  it('pages get a nonce, whatever their path ends with; the API, /metrics and built assets do not', () => {
    for (const page of ['/', '/failovers', '/leases/jobs%3Areport.v2', '/leases/a.json', '/icon.svg', '/apiary']) expect(isPagePath(page), page).toBe(true);
    for (const other of ['/api', '/api/v1/leases', '/metrics', '/_next/static/chunks/x.js']) expect(isPagePath(other), other).toBe(false);
    expect(securityHeaders(null)['Content-Security-Policy']).toBe(API_POLICY);
    expect(securityHeaders('n')['Content-Security-Policy']).toContain("'nonce-n'");
  });
});

/** @type {import('next').NextConfig} */
const nextConfig = {
  // PGlite loads its WASM and data files relative to its own module. Bundled into a
  // server chunk, Turbopack rewrites those to browser URLs and the first page that
  // opens the embedded store fails; keep it (and the native-ish drivers) external.
  serverExternalPackages: ['@electric-sql/pglite', 'pglite-prisma-adapter', 'pg', 'ioredis', 'etcd3'],
  poweredByHeader: false,
  reactStrictMode: true,
  // The repository is checked by `npm run typecheck` and `npm run lint` in `npm test`;
  // the build does not need to repeat it.
  typescript: { ignoreBuildErrors: true },
  // The security headers of every answer, the routes that read a body included (proxy.ts does
  // not see those: it sets the same, and a page's nonce'd policy, on what it sees). The values
  // are lib/api/security-headers.ts's; tests/unit/security-headers.test.ts holds them equal.
  async headers() {
    const common = [
      { key: 'X-Content-Type-Options', value: 'nosniff' },
      { key: 'X-Frame-Options', value: 'DENY' },
      { key: 'Referrer-Policy', value: 'same-origin' },
    ];
    const nothing = { key: 'Content-Security-Policy', value: "default-src 'none'; frame-ancestors 'none'" };
    return [
      { source: '/:path*', headers: common },
      { source: '/api/:path*', headers: [nothing] },
      { source: '/metrics', headers: [nothing] },
    ];
  },
};

export default nextConfig;

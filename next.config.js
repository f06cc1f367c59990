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
};

export default nextConfig;

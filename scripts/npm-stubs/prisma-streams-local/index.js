// Leasehold does not use `prisma dev` (its store is PostgreSQL or the embedded PGlite, and its
// migrations are applied by lib/db/migrate.ts), so Prisma's local streams server is replaced by
// this stub in package.json "overrides": the real one declares Node 22 and Bun, and npm warned
// about it on every install. Asked for anyway, it says why it is not there.
exports.startLocalDurableStreamsServer = async function startLocalDurableStreamsServer() {
  throw new Error('Prisma\'s local streams server (used by `prisma dev`) is not installed in Leasehold: see the "overrides" field of package.json.');
};

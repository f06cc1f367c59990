-- Which Leasehold release migrated this store, and how far: a release that finds migrations
-- it does not ship names the release to run instead (lib/db/migrate.ts).

-- CreateTable
CREATE TABLE "StoreRelease" (
    "version" TEXT NOT NULL,
    "lastMigration" TEXT NOT NULL,
    "migratedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "StoreRelease_pkey" PRIMARY KEY ("version")
);

-- Holder-side telemetry (POST /api/v1/telemetry, lib/db/telemetry.ts): API tokens get a role
-- of their own, `reporter`, that people never have; holders' renewals are rolled up per lease,
-- holder and minute; each holder's last claim on a lease is kept.

-- CreateEnum
CREATE TYPE "TokenRole" AS ENUM ('viewer', 'operator', 'admin', 'reporter');

-- AlterTable: ApiToken.role becomes a TokenRole, every existing token keeping its role.
ALTER TABLE "ApiToken" ALTER COLUMN "role" DROP DEFAULT;
ALTER TABLE "ApiToken" ALTER COLUMN "role" TYPE "TokenRole" USING ("role"::text::"TokenRole");
ALTER TABLE "ApiToken" ALTER COLUMN "role" SET DEFAULT 'viewer';

-- CreateTable
CREATE TABLE "HolderRollup" (
    "leaseId" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "minute" TIMESTAMPTZ(3) NOT NULL,
    "count" INTEGER NOT NULL,
    "failed" INTEGER NOT NULL,
    "rttSumMs" DOUBLE PRECISION NOT NULL,
    "rttMaxMs" DOUBLE PRECISION NOT NULL,
    "lateCount" INTEGER NOT NULL,
    "lateSumMs" DOUBLE PRECISION NOT NULL,
    "lateMaxMs" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "HolderRollup_pkey" PRIMARY KEY ("leaseId","holder","minute")
);

-- CreateTable
CREATE TABLE "HolderClaim" (
    "leaseId" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "claims" BOOLEAN NOT NULL,
    "token" DECIMAL(78,0),
    "claimsSince" TIMESTAMPTZ(3),
    "reportedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "HolderClaim_pkey" PRIMARY KEY ("leaseId","holder")
);

-- CreateIndex
CREATE INDEX "HolderRollup_minute_idx" ON "HolderRollup"("minute");

-- CreateIndex
CREATE INDEX "HolderClaim_reportedAt_idx" ON "HolderClaim"("reportedAt");

-- AddForeignKey
ALTER TABLE "HolderRollup" ADD CONSTRAINT "HolderRollup_leaseId_fkey" FOREIGN KEY ("leaseId") REFERENCES "Lease"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "HolderClaim" ADD CONSTRAINT "HolderClaim_leaseId_fkey" FOREIGN KEY ("leaseId") REFERENCES "Lease"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AlterTable
ALTER TABLE "Lease" ADD COLUMN     "version" BIGINT NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "Lease" ADD COLUMN     "lastIntervalMs" INTEGER,
ADD COLUMN     "lastMarginMs" INTEGER;

-- AlterTable
ALTER TABLE "Lease" DROP COLUMN "raw",
ADD COLUMN     "detail" JSONB,
ADD COLUMN     "endedAt" TIMESTAMPTZ(3),
ADD COLUMN     "endedCause" TEXT,
ADD COLUMN     "lastHolder" TEXT,
ADD COLUMN     "lastToken" BIGINT,
ADD COLUMN     "problem" TEXT,
ADD COLUMN     "renewalSeq" BIGINT NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "Source" ADD COLUMN     "collectorId" TEXT,
ADD COLUMN     "collectorToken" BIGINT,
ADD COLUMN     "lastSeq" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "pollMs" INTEGER;

-- CreateTable
CREATE TABLE "SourceEvent" (
    "id" BIGSERIAL NOT NULL,
    "sourceName" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "detail" JSONB,

    CONSTRAINT "SourceEvent_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "SourceEvent_at_idx" ON "SourceEvent"("at");

-- CreateIndex
CREATE UNIQUE INDEX "SourceEvent_sourceName_seq_key" ON "SourceEvent"("sourceName", "seq");

-- CreateIndex
CREATE INDEX "Lease_sourceName_state_idx" ON "Lease"("sourceName", "state");

-- AddForeignKey
ALTER TABLE "SourceEvent" ADD CONSTRAINT "SourceEvent_sourceName_fkey" FOREIGN KEY ("sourceName") REFERENCES "Source"("name") ON DELETE CASCADE ON UPDATE CASCADE;

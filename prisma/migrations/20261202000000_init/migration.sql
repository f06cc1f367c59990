-- CreateEnum
CREATE TYPE "Role" AS ENUM ('viewer', 'operator', 'admin');

-- CreateEnum
CREATE TYPE "SourceStatus" AS ENUM ('unknown', 'up', 'down');

-- CreateEnum
CREATE TYPE "AlertState" AS ENUM ('firing', 'resolved');

-- CreateEnum
CREATE TYPE "DeliveryStatus" AS ENUM ('pending', 'delivered', 'failed');

-- CreateTable
CREATE TABLE "Source" (
    "name" TEXT NOT NULL,
    "backend" TEXT NOT NULL,
    "status" "SourceStatus" NOT NULL DEFAULT 'unknown',
    "lastGoodReadAt" TIMESTAMPTZ(3),
    "lastError" TEXT,
    "lastPollMs" INTEGER,
    "detail" JSONB,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Source_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "Lease" (
    "id" TEXT NOT NULL,
    "sourceName" TEXT NOT NULL,
    "backend" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "holder" TEXT,
    "token" BIGINT,
    "fenced" BOOLEAN NOT NULL DEFAULT false,
    "ttlMs" INTEGER,
    "acquiredAt" TIMESTAMPTZ(3),
    "renewedAt" TIMESTAMPTZ(3),
    "expiresAt" TIMESTAMPTZ(3),
    "observedAt" TIMESTAMPTZ(3) NOT NULL,
    "stale" BOOLEAN NOT NULL DEFAULT false,
    "candidates" JSONB NOT NULL DEFAULT '[]',
    "transitions" INTEGER NOT NULL DEFAULT 0,
    "lastSeq" INTEGER NOT NULL DEFAULT 0,
    "raw" JSONB,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Lease_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "LeaseEvent" (
    "id" BIGSERIAL NOT NULL,
    "leaseId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "holder" TEXT,
    "previousHolder" TEXT,
    "token" BIGINT,
    "previousToken" BIGINT,
    "gapMs" INTEGER,
    "detail" JSONB,

    CONSTRAINT "LeaseEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "RenewalRollup" (
    "leaseId" TEXT NOT NULL,
    "minute" TIMESTAMPTZ(3) NOT NULL,
    "count" INTEGER NOT NULL,
    "intervalMin" INTEGER NOT NULL,
    "intervalP50" INTEGER NOT NULL,
    "intervalP99" INTEGER NOT NULL,
    "intervalMax" INTEGER NOT NULL,
    "marginMin" INTEGER NOT NULL,
    "marginP50" INTEGER NOT NULL,
    "marginP99" INTEGER NOT NULL,
    "marginMax" INTEGER NOT NULL,

    CONSTRAINT "RenewalRollup_pkey" PRIMARY KEY ("leaseId","minute")
);

-- CreateTable
CREATE TABLE "RenewalSample" (
    "leaseId" TEXT NOT NULL,
    "slot" INTEGER NOT NULL,
    "seq" BIGINT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "holder" TEXT,
    "intervalMs" INTEGER NOT NULL,
    "marginMs" INTEGER NOT NULL,
    "ttlMs" INTEGER,

    CONSTRAINT "RenewalSample_pkey" PRIMARY KEY ("leaseId","slot")
);

-- CreateTable
CREATE TABLE "AlertRule" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "match" JSONB NOT NULL DEFAULT '{}',
    "params" JSONB NOT NULL DEFAULT '{}',
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AlertRule_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Alert" (
    "id" TEXT NOT NULL,
    "ruleId" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "state" "AlertState" NOT NULL,
    "summary" TEXT NOT NULL,
    "detail" JSONB,
    "startedAt" TIMESTAMPTZ(3) NOT NULL,
    "resolvedAt" TIMESTAMPTZ(3),

    CONSTRAINT "Alert_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Webhook" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "format" TEXT NOT NULL DEFAULT 'native',
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Webhook_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WebhookDelivery" (
    "id" BIGSERIAL NOT NULL,
    "webhookId" TEXT NOT NULL,
    "alertId" TEXT,
    "payload" JSONB NOT NULL,
    "status" "DeliveryStatus" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastStatusCode" INTEGER,
    "lastError" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deliveredAt" TIMESTAMPTZ(3),

    CONSTRAINT "WebhookDelivery_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AuditEntry" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "requestId" TEXT NOT NULL,
    "phase" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "actorRole" TEXT NOT NULL,
    "leaseId" TEXT,
    "reason" TEXT,
    "expectedHolder" TEXT,
    "expectedToken" BIGINT,
    "previousToken" BIGINT,
    "newToken" BIGINT,
    "dryRun" BOOLEAN NOT NULL DEFAULT false,
    "detail" JSONB,

    CONSTRAINT "AuditEntry_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "User" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "passwordHash" TEXT NOT NULL,
    "role" "Role" NOT NULL DEFAULT 'viewer',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "disabledAt" TIMESTAMPTZ(3),

    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Session" (
    "id" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeenAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Session_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApiToken" (
    "id" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMPTZ(3),
    "expiresAt" TIMESTAMPTZ(3),
    "revokedAt" TIMESTAMPTZ(3),

    CONSTRAINT "ApiToken_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CollectorLease" (
    "name" VARCHAR(200) NOT NULL,
    "owner" VARCHAR(200),
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "token" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "CollectorLease_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "Lease_state_idx" ON "Lease"("state");

-- CreateIndex
CREATE UNIQUE INDEX "Lease_sourceName_key_key" ON "Lease"("sourceName", "key");

-- CreateIndex
CREATE INDEX "LeaseEvent_at_idx" ON "LeaseEvent"("at");

-- CreateIndex
CREATE INDEX "LeaseEvent_type_at_idx" ON "LeaseEvent"("type", "at");

-- CreateIndex
CREATE UNIQUE INDEX "LeaseEvent_leaseId_seq_key" ON "LeaseEvent"("leaseId", "seq");

-- CreateIndex
CREATE INDEX "RenewalRollup_minute_idx" ON "RenewalRollup"("minute");

-- CreateIndex
CREATE UNIQUE INDEX "AlertRule_name_key" ON "AlertRule"("name");

-- CreateIndex
CREATE INDEX "Alert_ruleId_fingerprint_idx" ON "Alert"("ruleId", "fingerprint");

-- CreateIndex
CREATE INDEX "Alert_state_startedAt_idx" ON "Alert"("state", "startedAt");

-- CreateIndex
CREATE UNIQUE INDEX "Webhook_name_key" ON "Webhook"("name");

-- CreateIndex
CREATE INDEX "WebhookDelivery_status_nextAttemptAt_idx" ON "WebhookDelivery"("status", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "AuditEntry_at_idx" ON "AuditEntry"("at");

-- CreateIndex
CREATE INDEX "AuditEntry_leaseId_at_idx" ON "AuditEntry"("leaseId", "at");

-- CreateIndex
CREATE INDEX "AuditEntry_requestId_idx" ON "AuditEntry"("requestId");

-- CreateIndex
CREATE UNIQUE INDEX "User_name_key" ON "User"("name");

-- CreateIndex
CREATE INDEX "Session_userId_idx" ON "Session"("userId");

-- CreateIndex
CREATE INDEX "Session_expiresAt_idx" ON "Session"("expiresAt");

-- CreateIndex
CREATE UNIQUE INDEX "ApiToken_tokenHash_key" ON "ApiToken"("tokenHash");

-- CreateIndex
CREATE UNIQUE INDEX "ApiToken_userId_name_key" ON "ApiToken"("userId", "name");

-- AddForeignKey
ALTER TABLE "Lease" ADD CONSTRAINT "Lease_sourceName_fkey" FOREIGN KEY ("sourceName") REFERENCES "Source"("name") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "LeaseEvent" ADD CONSTRAINT "LeaseEvent_leaseId_fkey" FOREIGN KEY ("leaseId") REFERENCES "Lease"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RenewalRollup" ADD CONSTRAINT "RenewalRollup_leaseId_fkey" FOREIGN KEY ("leaseId") REFERENCES "Lease"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RenewalSample" ADD CONSTRAINT "RenewalSample_leaseId_fkey" FOREIGN KEY ("leaseId") REFERENCES "Lease"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Alert" ADD CONSTRAINT "Alert_ruleId_fkey" FOREIGN KEY ("ruleId") REFERENCES "AlertRule"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WebhookDelivery" ADD CONSTRAINT "WebhookDelivery_webhookId_fkey" FOREIGN KEY ("webhookId") REFERENCES "Webhook"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WebhookDelivery" ADD CONSTRAINT "WebhookDelivery_alertId_fkey" FOREIGN KEY ("alertId") REFERENCES "Alert"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Session" ADD CONSTRAINT "Session_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApiToken" ADD CONSTRAINT "ApiToken_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AuditEntry is append-only: written by hand, Prisma has no syntax for triggers.
CREATE FUNCTION "AuditEntry_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'AuditEntry is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER "AuditEntry_no_update_delete"
    BEFORE UPDATE OR DELETE ON "AuditEntry"
    FOR EACH ROW EXECUTE FUNCTION "AuditEntry_append_only"();

CREATE TRIGGER "AuditEntry_no_truncate"
    BEFORE TRUNCATE ON "AuditEntry"
    FOR EACH STATEMENT EXECUTE FUNCTION "AuditEntry_append_only"();

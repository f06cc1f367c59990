-- Alerts (lib/alerts): rules with a scope and severity, silences, alerts firing then resolved
-- (at most one open per rule and subject: openKey is unique and NULL once resolved), webhook
-- endpoints with their format and secrets, and the outbox of deliveries. The tables of the
-- same names made by the first migration were never written: they are replaced.

-- DropTable
DROP TABLE "WebhookDelivery";
DROP TABLE "Webhook";
DROP TABLE "Alert";
DROP TABLE "AlertRule";

-- DropEnum
DROP TYPE "DeliveryStatus";

-- CreateEnum
CREATE TYPE "DeliveryStatus" AS ENUM ('pending', 'delivered', 'dead');

-- CreateTable
CREATE TABLE "AlertRule" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "severity" TEXT NOT NULL DEFAULT 'warning',
    "scope" TEXT NOT NULL DEFAULT 'all',
    "params" JSONB NOT NULL DEFAULT '{}',
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "builtIn" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AlertRule_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Silence" (
    "id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "ruleType" TEXT,
    "startsAt" TIMESTAMPTZ(3) NOT NULL,
    "endsAt" TIMESTAMPTZ(3) NOT NULL,
    "reason" TEXT NOT NULL,
    "author" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Silence_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Alert" (
    "id" BIGSERIAL NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "openKey" TEXT,
    "ruleId" TEXT NOT NULL,
    "ruleType" TEXT NOT NULL,
    "ruleName" TEXT NOT NULL,
    "severity" TEXT NOT NULL,
    "state" "AlertState" NOT NULL,
    "source" TEXT NOT NULL,
    "leaseId" TEXT,
    "leaseKey" TEXT,
    "summary" TEXT NOT NULL,
    "facts" JSONB NOT NULL,
    "occurrences" INTEGER NOT NULL DEFAULT 1,
    "silenced" BOOLEAN NOT NULL DEFAULT false,
    "notified" BOOLEAN NOT NULL DEFAULT false,
    "startedAt" TIMESTAMPTZ(3) NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,
    "resolveAt" TIMESTAMPTZ(3),
    "resolvedAt" TIMESTAMPTZ(3),

    CONSTRAINT "Alert_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Webhook" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "format" TEXT NOT NULL DEFAULT 'native',
    "secrets" TEXT[],
    "routingKey" TEXT,
    "rules" TEXT[],
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "disabledReason" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Webhook_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WebhookDelivery" (
    "id" BIGSERIAL NOT NULL,
    "messageId" TEXT NOT NULL,
    "webhookId" TEXT NOT NULL,
    "alertId" BIGINT,
    "event" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "status" "DeliveryStatus" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimedBy" TEXT,
    "claimedUntil" TIMESTAMPTZ(3),
    "lastStatusCode" INTEGER,
    "lastError" TEXT,
    "lastLatencyMs" INTEGER,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deliveredAt" TIMESTAMPTZ(3),

    CONSTRAINT "WebhookDelivery_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "AlertRule_name_key" ON "AlertRule"("name");

-- CreateIndex
CREATE INDEX "Silence_endsAt_idx" ON "Silence"("endsAt");

-- CreateIndex
CREATE UNIQUE INDEX "Alert_openKey_key" ON "Alert"("openKey");

-- CreateIndex
CREATE INDEX "Alert_state_startedAt_idx" ON "Alert"("state", "startedAt");

-- CreateIndex
CREATE INDEX "Alert_fingerprint_idx" ON "Alert"("fingerprint");

-- CreateIndex
CREATE INDEX "Alert_leaseId_startedAt_idx" ON "Alert"("leaseId", "startedAt");

-- CreateIndex
CREATE INDEX "Alert_resolveAt_idx" ON "Alert"("resolveAt");

-- CreateIndex
CREATE UNIQUE INDEX "Webhook_name_key" ON "Webhook"("name");

-- CreateIndex
CREATE UNIQUE INDEX "WebhookDelivery_messageId_key" ON "WebhookDelivery"("messageId");

-- CreateIndex
CREATE INDEX "WebhookDelivery_status_nextAttemptAt_idx" ON "WebhookDelivery"("status", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "WebhookDelivery_webhookId_createdAt_idx" ON "WebhookDelivery"("webhookId", "createdAt");

-- CreateIndex
CREATE INDEX "WebhookDelivery_alertId_idx" ON "WebhookDelivery"("alertId");

-- AddForeignKey
ALTER TABLE "WebhookDelivery" ADD CONSTRAINT "WebhookDelivery_webhookId_fkey" FOREIGN KEY ("webhookId") REFERENCES "Webhook"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WebhookDelivery" ADD CONSTRAINT "WebhookDelivery_alertId_fkey" FOREIGN KEY ("alertId") REFERENCES "Alert"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- The default rules, made once, here: edited or deleted later, they stay as people left them.
INSERT INTO "AlertRule" ("id", "name", "type", "severity", "scope", "params", "enabled", "builtIn") VALUES
    ('default-missed-renewal', 'Missed renewal', 'missed_renewal', 'critical', 'all', '{}', true, true),
    ('default-late-renewal', 'Late renewal', 'late_renewal', 'warning', 'all', '{"marginPercent": 20}', true, true),
    ('default-failover', 'Failover', 'failover', 'warning', 'all', '{"resolveAfterMs": 300000}', true, true),
    ('default-flapping', 'Flapping', 'flapping', 'warning', 'all', '{"changes": 3, "windowMs": 600000}', true, true),
    ('default-leaderless', 'Leaderless', 'leaderless', 'critical', 'all', '{"afterMs": 30000, "includeLocks": false}', true, true),
    ('default-token-regression', 'Token regression', 'token_regression', 'critical', 'all', '{"resolveAfterMs": 900000}', true, true),
    ('default-source-down', 'Source down', 'source_down', 'critical', 'all', '{"afterMs": 30000}', true, true),
    ('default-held-too-long', 'Held too long', 'held_too_long', 'warning', 'all', '{"afterMs": 3600000}', false, true),
    ('default-force-action', 'Forced action', 'force_action', 'info', 'all', '{"resolveAfterMs": 300000}', true, true);

-- Canary leases (lib/collector/canary.ts): each call of a source's canary lease, rolled up per
-- source, call and minute, its round trips counted in logarithmic buckets
-- (lib/domain/canary-stats.ts); and the slow_renewals rule on by default.

-- CreateTable
CREATE TABLE "CanaryRollup" (
    "source" TEXT NOT NULL,
    "call" TEXT NOT NULL,
    "minute" TIMESTAMPTZ(3) NOT NULL,
    "count" INTEGER NOT NULL,
    "failed" INTEGER NOT NULL,
    "sumMs" DOUBLE PRECISION NOT NULL,
    "maxMs" DOUBLE PRECISION NOT NULL,
    "buckets" JSONB NOT NULL,

    CONSTRAINT "CanaryRollup_pkey" PRIMARY KEY ("source","call","minute")
);

-- CreateIndex
CREATE INDEX "CanaryRollup_minute_idx" ON "CanaryRollup"("minute");

-- The rule fires only for sources with a canary (none by default): on, like the other defaults.
INSERT INTO "AlertRule" ("id", "name", "type", "severity", "scope", "params", "enabled", "builtIn") VALUES
    ('default-slow-renewals', 'Slow renewals', 'slow_renewals', 'warning', 'all', '{"ttlPercent": 25}', true, true)
ON CONFLICT DO NOTHING;

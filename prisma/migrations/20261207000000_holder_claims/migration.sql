-- Holders' claims checked against the backend (lib/domain/alert-rules/split-brain.ts and
-- late-holder.ts): each holder's last claim keeps until when it stands (the holder's own
-- "I hold it for another N ms", or a default), the TTL it asked for, and how late its last
-- renewals ran, and when that was reported.

-- AlterTable
ALTER TABLE "HolderClaim" ADD COLUMN "claimUntil" TIMESTAMPTZ(3);
ALTER TABLE "HolderClaim" ADD COLUMN "ttlMs" DOUBLE PRECISION;
ALTER TABLE "HolderClaim" ADD COLUMN "lateMaxMs" DOUBLE PRECISION;
ALTER TABLE "HolderClaim" ADD COLUMN "lateReportedAt" TIMESTAMPTZ(3);

-- The two rules, on by default like the other built-in rules.
INSERT INTO "AlertRule" ("id", "name", "type", "severity", "scope", "params", "enabled", "builtIn") VALUES
    ('default-late-holder', 'Late holder', 'late_holder', 'warning', 'all', '{"latePercent": 30}', true, true),
    ('default-split-brain', 'Split brain', 'split_brain', 'critical', 'all', '{"graceMs": 1000}', true, true)
-- A rule of the same id or name made by hand is left as it is.
ON CONFLICT DO NOTHING;

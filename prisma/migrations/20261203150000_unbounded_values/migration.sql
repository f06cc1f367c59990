-- The store holds whatever a backend can hold (issue 13): durations in milliseconds beyond
-- 24.9 days (a TTL of forty days overflowed INTEGER and froze the whole source) and fencing
-- tokens beyond 2^63 (a lease table's NUMERIC token column has no such limit; 78 digits is 2^256).

-- AlterTable
ALTER TABLE "Lease" ALTER COLUMN "token" SET DATA TYPE DECIMAL(78,0),
ALTER COLUMN "lastToken" SET DATA TYPE DECIMAL(78,0),
ALTER COLUMN "ttlMs" SET DATA TYPE BIGINT,
ALTER COLUMN "lastIntervalMs" SET DATA TYPE BIGINT,
ALTER COLUMN "lastMarginMs" SET DATA TYPE BIGINT;

-- AlterTable
ALTER TABLE "LeaseEvent" ALTER COLUMN "token" SET DATA TYPE DECIMAL(78,0),
ALTER COLUMN "previousToken" SET DATA TYPE DECIMAL(78,0),
ALTER COLUMN "gapMs" SET DATA TYPE BIGINT;

-- AlterTable
ALTER TABLE "RenewalRollup" ALTER COLUMN "intervalMin" SET DATA TYPE BIGINT,
ALTER COLUMN "intervalP50" SET DATA TYPE BIGINT,
ALTER COLUMN "intervalP99" SET DATA TYPE BIGINT,
ALTER COLUMN "intervalMax" SET DATA TYPE BIGINT,
ALTER COLUMN "marginMin" SET DATA TYPE BIGINT,
ALTER COLUMN "marginP50" SET DATA TYPE BIGINT,
ALTER COLUMN "marginP99" SET DATA TYPE BIGINT,
ALTER COLUMN "marginMax" SET DATA TYPE BIGINT;

-- AlterTable
ALTER TABLE "RenewalSample" ALTER COLUMN "intervalMs" SET DATA TYPE BIGINT,
ALTER COLUMN "marginMs" SET DATA TYPE BIGINT,
ALTER COLUMN "ttlMs" SET DATA TYPE BIGINT;

-- AlterTable
ALTER TABLE "AuditEntry" ALTER COLUMN "expectedToken" SET DATA TYPE DECIMAL(78,0),
ALTER COLUMN "previousToken" SET DATA TYPE DECIMAL(78,0),
ALTER COLUMN "newToken" SET DATA TYPE DECIMAL(78,0);

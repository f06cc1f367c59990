-- Issue 28, point 4: a store that stays bounded.
--
-- The time-series tables become PostgreSQL partitioned tables, one partition per UTC day of
-- their time column, so that retention (lib/db/retention.ts) drops whole days (DETACH, DROP)
-- instead of deleting rows:
--   LeaseEvent, SourceEvent     by "at"      (kept config.retention.eventDays)
--   RenewalRollup, HolderRollup,
--   CanaryRollup                by "minute"  (kept config.retention.rollupDays)
-- WebhookDelivery stays one table: it is an outbox whose rows change (claims, attempts,
-- status) and whose messageId is the receiver's idempotency key, unique on its own; retention
-- deletes its finished rows (delivered, dead) by age instead.
--
-- Each table gets a DEFAULT partition, so an insert never fails for want of a partition; the
-- daily partitions are named <table>_pYYYYMMDD and cover [day 00:00 UTC, next day 00:00 UTC).
--
-- How an existing store is converted, table by table: the table is renamed, a partitioned
-- table LIKE it (same columns, types, defaults; the id sequence is handed over) is made with
-- a partition for every day from its oldest row (at most 400 days back: older rows go to the
-- default partition, and retention deletes them) to three days ahead, the rows are copied,
-- the old table dropped, then keys, indexes and foreign keys are made again. A primary key or
-- unique constraint of a partitioned table must include the partition column: LeaseEvent's
-- and SourceEvent's become (id, at) and (leaseId, seq, at) / (sourceName, seq, at).
-- The whole migration runs in one transaction (lib/db/migrate.ts): the tables are locked while
-- their rows are copied (docs/upgrading.md gives the time it takes).

DO $$
DECLARE
  t record;
  old text;
  seq text;
  oldest date;
  today date := (now() AT TIME ZONE 'UTC')::date;
  d date;
BEGIN
  FOR t IN SELECT * FROM (VALUES ('LeaseEvent', 'at'), ('SourceEvent', 'at'), ('RenewalRollup', 'minute'),
                                 ('HolderRollup', 'minute'), ('CanaryRollup', 'minute')) AS v(name, col) LOOP
    old := t.name || '_unpartitioned';
    EXECUTE format('ALTER TABLE %I RENAME TO %I', t.name, old);
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS) PARTITION BY RANGE (%I)', t.name, old, t.col);
    seq := NULL;
    IF EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = old AND column_name = 'id') THEN
      seq := pg_get_serial_sequence(format('%I', old), 'id');
    END IF;
    IF seq IS NOT NULL THEN
      EXECUTE format('ALTER SEQUENCE %s OWNED BY %I.id', seq, t.name);
    END IF;
    EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', t.name || '_default', t.name);
    EXECUTE format('SELECT (min(%I) AT TIME ZONE ''UTC'')::date FROM %I', t.col, old) INTO oldest;
    oldest := greatest(least(coalesce(oldest, today), today), today - 400);
    d := oldest;
    WHILE d <= today + 3 LOOP
      EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                     t.name || '_p' || to_char(d, 'YYYYMMDD'), t.name, d::text || ' 00:00:00+00', (d + 1)::text || ' 00:00:00+00');
      d := d + 1;
    END LOOP;
    EXECUTE format('INSERT INTO %I SELECT * FROM %I', t.name, old);
    EXECUTE format('DROP TABLE %I', old);
  END LOOP;
END $$;

-- LeaseEvent
ALTER TABLE "LeaseEvent" ADD CONSTRAINT "LeaseEvent_pkey" PRIMARY KEY ("id", "at");
CREATE UNIQUE INDEX "LeaseEvent_leaseId_seq_at_key" ON "LeaseEvent"("leaseId", "seq", "at");
CREATE INDEX "LeaseEvent_at_idx" ON "LeaseEvent"("at");
CREATE INDEX "LeaseEvent_type_at_idx" ON "LeaseEvent"("type", "at");
ALTER TABLE "LeaseEvent" ADD CONSTRAINT "LeaseEvent_leaseId_fkey" FOREIGN KEY ("leaseId") REFERENCES "Lease"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- SourceEvent
ALTER TABLE "SourceEvent" ADD CONSTRAINT "SourceEvent_pkey" PRIMARY KEY ("id", "at");
CREATE UNIQUE INDEX "SourceEvent_sourceName_seq_at_key" ON "SourceEvent"("sourceName", "seq", "at");
CREATE INDEX "SourceEvent_at_idx" ON "SourceEvent"("at");
ALTER TABLE "SourceEvent" ADD CONSTRAINT "SourceEvent_sourceName_fkey" FOREIGN KEY ("sourceName") REFERENCES "Source"("name") ON DELETE CASCADE ON UPDATE CASCADE;

-- RenewalRollup
ALTER TABLE "RenewalRollup" ADD CONSTRAINT "RenewalRollup_pkey" PRIMARY KEY ("leaseId", "minute");
CREATE INDEX "RenewalRollup_minute_idx" ON "RenewalRollup"("minute");
ALTER TABLE "RenewalRollup" ADD CONSTRAINT "RenewalRollup_leaseId_fkey" FOREIGN KEY ("leaseId") REFERENCES "Lease"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- HolderRollup
ALTER TABLE "HolderRollup" ADD CONSTRAINT "HolderRollup_pkey" PRIMARY KEY ("leaseId", "holder", "minute");
CREATE INDEX "HolderRollup_minute_idx" ON "HolderRollup"("minute");
ALTER TABLE "HolderRollup" ADD CONSTRAINT "HolderRollup_leaseId_fkey" FOREIGN KEY ("leaseId") REFERENCES "Lease"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- CanaryRollup
ALTER TABLE "CanaryRollup" ADD CONSTRAINT "CanaryRollup_pkey" PRIMARY KEY ("source", "call", "minute");
CREATE INDEX "CanaryRollup_minute_idx" ON "CanaryRollup"("minute");

-- What retention deletes row by row: finished deliveries by age.
CREATE INDEX "WebhookDelivery_createdAt_idx" ON "WebhookDelivery"("createdAt");

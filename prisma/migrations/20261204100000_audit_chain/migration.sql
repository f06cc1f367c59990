-- The audit log becomes tamper-evident: each entry holds the hash of the entry before it and its
-- own, hash = sha256(prevHash + "\n" + canonical(entry)) (lib/db/audit-chain.ts), checked by
-- `leasehold audit verify`. Entries also say how the actor signed in, from where, the status of
-- a result and the state found on the backend.
--
-- The hashes are computed by lib/db/audit.ts, not in SQL, so entries written before this
-- migration could not be given theirs. No released version writes audit entries (the admin
-- actions come with this change), so the table is empty; if it is not, the migration stops
-- rather than start the chain on entries it cannot vouch for.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM "AuditEntry") THEN
        RAISE EXCEPTION 'AuditEntry has entries written before the audit chain existed; keep a copy (pg_dump -t ''"AuditEntry"''), remove them as the table owner (ALTER TABLE "AuditEntry" DISABLE TRIGGER USER; DELETE FROM "AuditEntry"; ALTER TABLE "AuditEntry" ENABLE TRIGGER USER) and migrate again';
    END IF;
END;
$$;

-- AlterTable
ALTER TABLE "AuditEntry" ADD COLUMN     "actualHolder" TEXT,
ADD COLUMN     "actualToken" DECIMAL(78,0),
ADD COLUMN     "authMethod" TEXT NOT NULL,
ADD COLUMN     "clientAddress" TEXT,
ADD COLUMN     "hash" TEXT NOT NULL,
ADD COLUMN     "prevHash" TEXT,
ADD COLUMN     "status" INTEGER;

-- CreateIndex
CREATE UNIQUE INDEX "AuditEntry_prevHash_key" ON "AuditEntry"("prevHash");

-- The values the application writes, checked by the database too (Prisma has no syntax for checks).
ALTER TABLE "AuditEntry"
    ADD CONSTRAINT "AuditEntry_phase_check" CHECK ("phase" IN ('requested', 'done', 'refused', 'error')),
    ADD CONSTRAINT "AuditEntry_authMethod_check" CHECK ("authMethod" IN ('password', 'token', 'oidc', 'anonymous')),
    ADD CONSTRAINT "AuditEntry_status_check" CHECK ("status" IS NULL OR "status" BETWEEN 100 AND 599),
    ADD CONSTRAINT "AuditEntry_refused_status_check" CHECK ("phase" <> 'refused' OR "status" IS NOT NULL),
    ADD CONSTRAINT "AuditEntry_hash_check" CHECK ("hash" ~ '^[0-9a-f]{64}$' AND ("prevHash" IS NULL OR "prevHash" ~ '^[0-9a-f]{64}$'));

-- The chain, checked on every insert: an entry's prevHash is the hash of the entry with the
-- highest id (null for the first entry), and its id is higher. lib/db/audit.ts appends under
-- LOCK TABLE ... IN EXCLUSIVE MODE; without that lock two concurrent inserts could both pass
-- this check, and the unique index on "prevHash" then refuses the second.
CREATE FUNCTION "AuditEntry_chain"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    last_id BIGINT;
    last_hash TEXT;
BEGIN
    SELECT id, hash INTO last_id, last_hash FROM "AuditEntry" ORDER BY id DESC LIMIT 1;
    IF last_id IS NULL THEN
        IF NEW."prevHash" IS NOT NULL THEN
            RAISE EXCEPTION 'AuditEntry chain: the first entry has no previous hash, not %', NEW."prevHash"
                USING ERRCODE = 'check_violation';
        END IF;
    ELSIF NEW."prevHash" IS DISTINCT FROM last_hash THEN
        RAISE EXCEPTION 'AuditEntry chain: prevHash must be % (the hash of entry %), not %', last_hash, last_id, coalesce(NEW."prevHash", 'null')
            USING ERRCODE = 'check_violation';
    ELSIF NEW.id <= last_id THEN
        RAISE EXCEPTION 'AuditEntry chain: id % does not follow the last entry''s id %', NEW.id, last_id
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$;

CREATE TRIGGER "AuditEntry_chain"
    BEFORE INSERT ON "AuditEntry"
    FOR EACH ROW EXECUTE FUNCTION "AuditEntry_chain"();

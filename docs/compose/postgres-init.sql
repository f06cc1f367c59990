-- NOTE: not run on the machine that wrote it (Docker was not available there). The table
-- definitions were checked against PostgreSQL 15 there; the roles and databases were not.
--
-- Run once by the postgres image (docker-compose.yml mounts it in /docker-entrypoint-initdb.d),
-- as the superuser, on an empty data volume.

-- As scripts/services.sh: a login role "leasehold" that may create databases and may see
-- other sessions' client address and start time (advisory lock holders).
CREATE ROLE leasehold LOGIN CREATEDB PASSWORD 'leasehold';
GRANT pg_read_all_stats TO leasehold;
CREATE DATABASE leasehold OWNER leasehold;

-- Leasehold's own store, for when DATABASE_URL is set in docker-compose.yml. A database of
-- its own: `leasehold migrate check` reports every other table in its public schema as drift.
CREATE DATABASE leasehold_store OWNER leasehold;

-- The tables docs/compose/leasehold.config.json observes, owned by "leasehold".
\connect leasehold

-- lib/lease's PostgreSQL layout (format "leasehold"), as lib/lease/postgres.ts creates it.
CREATE TABLE leases (
  name       VARCHAR(200) PRIMARY KEY,
  owner      VARCHAR(200),
  expires_at TIMESTAMPTZ NOT NULL,
  token      BIGINT NOT NULL DEFAULT 0);
ALTER TABLE leases OWNER TO leasehold;

-- The table docs/examples/lease-postgres.ts and fenced-store.ts use.
CREATE TABLE docs_example_leases (
  name       VARCHAR(200) PRIMARY KEY,
  owner      VARCHAR(200),
  expires_at TIMESTAMPTZ NOT NULL,
  token      BIGINT NOT NULL DEFAULT 0);
ALTER TABLE docs_example_leases OWNER TO leasehold;

-- ShedLock's layout (format "shedlock"), as ShedLock's documentation creates it.
CREATE TABLE shedlock (
  name       VARCHAR(64)  NOT NULL,
  lock_until TIMESTAMP    NOT NULL,
  locked_at  TIMESTAMP    NOT NULL,
  locked_by  VARCHAR(255) NOT NULL,
  PRIMARY KEY (name));
ALTER TABLE shedlock OWNER TO leasehold;

-- Issue 28, point 1: room on each page for the next version of a renewed row.
--
-- The collector rewrites a lease's row at every renewal it sees (10,000 renewals a second are
-- 10,000 row updates a second), and a slot of the renewal ring RenewalSample with it. With
-- pages packed full (the default fillfactor, 100), each new version of a row went to another
-- page and into every index of its table (Lease has four). With room left on the page,
-- PostgreSQL writes the new version beside the old one and leaves the indexes alone (a
-- heap-only tuple update: a renewal changes no indexed column). bench/renewal-write-bench.ts
-- measured the lease rows of 10,000 renewals (written in part) at about 200 ms a batch packed
-- full and 127 ms with this room (bench/RESULTS.md).
--
-- Only pages filled from now on keep the room; a store's existing pages get it with VACUUM
-- FULL "Lease", "RenewalSample" (which locks the tables while it runs). Nothing is rewritten
-- here, so the migration takes no time.
ALTER TABLE "Lease" SET (fillfactor = 70);
ALTER TABLE "RenewalSample" SET (fillfactor = 70);

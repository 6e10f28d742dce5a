-- Intent creation at concurrency (issue 11 item 5): less work for every
-- address claimed and every address pre-derived.
--
-- addresses_created (0008) served the watched-set refresh by creation time;
-- that refresh goes by seq since 0005, and nothing else reads the index. A
-- claim rewrites its address row, so every index costs each creation an
-- insert; this one was read by nobody.
DROP INDEX IF EXISTS addresses_created;

-- The commit-ordered address seq (0005) took its advisory lock and drew its
-- value in a plpgsql trigger called once per row, which the replenisher
-- paid a thousand times per round. Now the lock is taken once per statement,
-- by a BEFORE STATEMENT trigger, which PostgreSQL fires before it computes
-- the first row (and so before any row's default draws from the sequence).
-- The guarantee is unchanged: seq values are drawn only under the lock,
-- which is held until commit, so seq order is commit order.
CREATE FUNCTION paywatch_address_seq_lock() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7303203);
    RETURN NULL;
END;
$$;
DROP TRIGGER addresses_seq ON addresses;
DROP FUNCTION paywatch_address_seq();
ALTER TABLE addresses ALTER COLUMN seq SET DEFAULT nextval('addresses_seq');
CREATE TRIGGER addresses_seq_lock BEFORE INSERT ON addresses
    FOR EACH STATEMENT EXECUTE FUNCTION paywatch_address_seq_lock();

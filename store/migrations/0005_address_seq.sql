-- Watched addresses carry a commit-ordered sequence: scanners refresh their
-- watched sets by seq, never by a writer's clock. A BEFORE INSERT trigger
-- takes a transaction-scoped advisory lock (held until commit, as the events
-- table does) before it draws the next value, so seq order is commit order:
-- a reader that sees seq N committed has seen every smaller one that will
-- ever commit, and "seq > the largest seen" never misses a row committed
-- late.
CREATE SEQUENCE addresses_seq;
ALTER TABLE addresses ADD COLUMN seq BIGINT;
WITH o AS (SELECT network, key, row_number() OVER (ORDER BY created_at, network, key) AS n FROM addresses)
UPDATE addresses a SET seq = o.n FROM o WHERE a.network = o.network AND a.key = o.key;
SELECT setval('addresses_seq', coalesce((SELECT max(seq) FROM addresses), 0) + 1, false);
ALTER TABLE addresses ALTER COLUMN seq SET NOT NULL;
CREATE UNIQUE INDEX addresses_network_seq ON addresses (network, seq);

CREATE FUNCTION paywatch_address_seq() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7303203);
    NEW.seq := nextval('addresses_seq');
    RETURN NEW;
END;
$$;
CREATE TRIGGER addresses_seq BEFORE INSERT ON addresses
    FOR EACH ROW EXECUTE FUNCTION paywatch_address_seq();

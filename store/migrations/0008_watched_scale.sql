-- Scale of the watched set (issue 11).
--
-- Every scanner step reads the addresses created since its last refresh; at
-- ten million rows that must be an index range, not a table scan.
CREATE INDEX addresses_created ON addresses (network, created_at);

-- address_counts is the number of watched addresses of each network, kept by
-- the statements that insert or delete them, so status and metrics read one
-- row instead of counting millions on every call.
CREATE TABLE address_counts (
    network TEXT PRIMARY KEY,
    n       BIGINT NOT NULL CHECK (n >= 0)
);
INSERT INTO address_counts (network, n) SELECT network, count(*) FROM addresses GROUP BY network;

CREATE FUNCTION address_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO address_counts (network, n)
        SELECT network, count(*) FROM changed_rows GROUP BY network
        ON CONFLICT (network) DO UPDATE SET n = address_counts.n + EXCLUDED.n;
    RETURN NULL;
END $$;

CREATE FUNCTION address_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE address_counts c SET n = c.n - d.n
        FROM (SELECT network, count(*) AS n FROM changed_rows GROUP BY network) d
        WHERE c.network = d.network;
    RETURN NULL;
END $$;

CREATE FUNCTION address_counts_clear() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM address_counts;
    RETURN NULL;
END $$;

CREATE TRIGGER addresses_count_insert AFTER INSERT ON addresses
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION address_counts_add();
CREATE TRIGGER addresses_count_delete AFTER DELETE ON addresses
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION address_counts_remove();
CREATE TRIGGER addresses_count_truncate AFTER TRUNCATE ON addresses
    FOR EACH STATEMENT EXECUTE FUNCTION address_counts_clear();

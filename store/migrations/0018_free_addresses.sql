-- The addresses not yet handed out, as a queue of their own (issue 11
-- item 5).
--
-- A creation took its address by rewriting the address row (intent_id,
-- assigned_at). That rewrite was the dearest part of a creation: a new row
-- version and an entry in each of the table's five indexes, on a table of
-- every address ever watched. And the claim found the lowest free index
-- through a partial index whose front held an entry for every address
-- claimed since the last vacuum of that table, which at ten million rows
-- comes once per two million claims: every claim stepped over all of them.
--
-- Now a free address is a row of free_addresses (lane: the derivation
-- source, or '' for the imported pool; ord: the derivation index, or for
-- the pool the commit-ordered seq, its import order), a claim deletes it,
-- and the address row is never written again. Which intent has an address
-- is what intents says (UNIQUE (network, address_key)), as it always was;
-- addresses.intent_id repeated it. The queue holds about twice the gap per
-- network, and the replenisher vacuums it after each top-up, so a claim
-- steps over at most a round of claimed entries.
CREATE TABLE free_addresses (
    network TEXT NOT NULL,
    lane    TEXT NOT NULL,
    ord     BIGINT NOT NULL,
    key     BYTEA NOT NULL,
    PRIMARY KEY (network, lane, ord)
) WITH (autovacuum_vacuum_threshold = 500, autovacuum_vacuum_scale_factor = 0);

INSERT INTO free_addresses (network, lane, ord, key)
    SELECT network, CASE WHEN derivation_index IS NULL THEN '' ELSE source END, coalesce(derivation_index, seq), key
    FROM addresses WHERE intent_id IS NULL;

-- Every address handed out before is an intent's address; refuse to drop
-- the column if one is not.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM addresses a WHERE a.intent_id IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM intents i WHERE i.id = a.intent_id AND i.network = a.network AND i.address_key = a.key)) THEN
        RAISE EXCEPTION 'an address is assigned to an intent that does not have it';
    END IF;
END $$;

DROP INDEX addresses_free_pool;
DROP INDEX addresses_free_derived;
DROP INDEX addresses_assigned_intent;
ALTER TABLE addresses DROP COLUMN intent_id, DROP COLUMN assigned_at;

-- Every address inserted is free, whatever inserts it.
CREATE FUNCTION free_addresses_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO free_addresses (network, lane, ord, key)
        SELECT network, CASE WHEN derivation_index IS NULL THEN '' ELSE source END, coalesce(derivation_index, seq), key
        FROM changed_rows;
    RETURN NULL;
END $$;
CREATE TRIGGER addresses_free_insert AFTER INSERT ON addresses
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION free_addresses_add();

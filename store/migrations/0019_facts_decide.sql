-- Books that are a function of today's facts (issue 21).
--
-- A transfer's decision now stores what part of it pays its intent
-- (settled), and a finance resolution names what it covers: the whole
-- transfer, or a surplus of N base units on top of what pays the intent
-- (covers). What no resolution covers and no intent settles is
-- unresolved: amount − settled − resolved, to the base unit. A transfer
-- may therefore carry several decisions (a surplus credited to an account,
-- then the rest refunded once its partner left the chain), at most one of
-- them a live credit_intent.

ALTER TABLE transfers
    ADD COLUMN settled  NUMERIC(78, 0) NOT NULL DEFAULT 0 CHECK (settled >= 0),
    ADD COLUMN resolved NUMERIC(78, 0) NOT NULL DEFAULT 0 CHECK (resolved >= 0);

-- What paid so far: a settling transfer settles all of it, an overpaid one
-- what its intent still needed after its other settling transfers.
UPDATE transfers SET settled = amount WHERE classification = 'settles' AND status <> 'orphaned';
UPDATE transfers t SET settled = LEAST(t.amount, GREATEST(0, i.amount - coalesce((
        SELECT sum(o.amount) FROM transfers o WHERE o.intent_id = t.intent_id AND o.id <> t.id
            AND o.classification = 'settles' AND o.status <> 'orphaned'), 0)))
    FROM intents i WHERE i.id = t.intent_id AND t.classification = 'overpaid' AND t.status <> 'orphaned';

-- A resolution covers base units. Before this migration a resolution of an
-- overpaid (or once overpaid, now reverted) transfer decided its surplus,
-- any other the whole transfer; credit_intent covers nothing of its own (it
-- makes the transfer count for an intent).
ALTER TABLE resolutions ADD COLUMN covers NUMERIC(78, 0) CHECK (covers IS NULL OR covers >= 0);
UPDATE resolutions r SET covers = CASE
        WHEN t.classification IN ('overpaid', 'reverted') AND i.id IS NOT NULL AND t.amount > i.amount - coalesce((
            SELECT sum(o.amount) FROM transfers o WHERE o.intent_id = t.intent_id AND o.id <> t.id
                AND o.classification = 'settles' AND o.status <> 'orphaned'), 0)
            AND i.amount - coalesce((
            SELECT sum(o.amount) FROM transfers o WHERE o.intent_id = t.intent_id AND o.id <> t.id
                AND o.classification = 'settles' AND o.status <> 'orphaned'), 0) > 0
        THEN t.amount - (i.amount - coalesce((
            SELECT sum(o.amount) FROM transfers o WHERE o.intent_id = t.intent_id AND o.id <> t.id
                AND o.classification = 'settles' AND o.status <> 'orphaned'), 0))
        ELSE t.amount END
    FROM transfers t LEFT JOIN intents i ON i.id = t.intent_id
    WHERE t.id = r.transfer_id AND r.action <> 'credit_intent';
-- Every decision but credit_intent names what it covers (0 for a
-- zero-amount transfer: an address-poisoning one, ignored).
ALTER TABLE resolutions ADD CONSTRAINT resolutions_covers_named CHECK ((action = 'credit_intent') = (covers IS NULL));

UPDATE transfers t SET resolved = LEAST(t.amount - t.settled, r.covered)
    FROM (SELECT transfer_id, sum(covers) AS covered FROM resolutions
          WHERE voided_at IS NULL AND action <> 'credit_intent' AND covers IS NOT NULL GROUP BY transfer_id) r
    WHERE r.transfer_id = t.id;
ALTER TABLE transfers ADD CONSTRAINT transfers_parts_within_amount CHECK (settled + resolved <= amount);

-- The order paywatch recorded transfers in, and credited them to an intent
-- in: one sequence for both (a credited transfer counts for its intent from
-- its credit on). Counting transfers add up in this order, and a payable's
-- first complete payment is the one completed first in it; a timestamp
-- ties within a transaction and may run backwards with the wall clock.
CREATE SEQUENCE record_order;
ALTER TABLE transfers ADD COLUMN recorded BIGINT;
ALTER TABLE resolutions ADD COLUMN recorded BIGINT;
CREATE TEMPORARY TABLE record_order_0019 ON COMMIT DROP AS
    SELECT kind, key, row_number() OVER (ORDER BY created_at, kind DESC, key) AS n FROM (
        SELECT 'transfer' AS kind, id AS key, created_at FROM transfers
        UNION ALL SELECT 'resolution', lpad(seq::text, 20, '0'), created_at FROM resolutions) x;
UPDATE transfers t SET recorded = o.n FROM record_order_0019 o WHERE o.kind = 'transfer' AND o.key = t.id;
UPDATE resolutions r SET recorded = o.n FROM record_order_0019 o WHERE o.kind = 'resolution' AND o.key = lpad(r.seq::text, 20, '0');
SELECT setval('record_order', (SELECT count(*) + 1 FROM record_order_0019), false);
ALTER TABLE transfers ALTER COLUMN recorded SET DEFAULT nextval('record_order'), ALTER COLUMN recorded SET NOT NULL;
ALTER TABLE resolutions ALTER COLUMN recorded SET DEFAULT nextval('record_order'), ALTER COLUMN recorded SET NOT NULL;
CREATE INDEX transfers_intent_recorded ON transfers (intent_id, recorded);

-- Several decisions per transfer; one live credit_intent at most.
DROP INDEX resolutions_one_live;
CREATE UNIQUE INDEX resolutions_one_live_credit ON resolutions (transfer_id) WHERE voided_at IS NULL AND action = 'credit_intent';
CREATE INDEX resolutions_transfer ON resolutions (transfer_id, seq);

-- A credit_account credit follows its own decision (there may be one for a
-- surplus and one for the rest): entries name the resolution they belong to.
ALTER TABLE ledger_entries ADD COLUMN resolution_seq BIGINT REFERENCES resolutions (seq);
UPDATE ledger_entries e SET resolution_seq = r.seq FROM resolutions r
    WHERE e.transfer_id IS NOT NULL AND r.transfer_id = e.transfer_id AND r.action = 'credit_account';
CREATE INDEX ledger_entries_resolution ON ledger_entries (resolution_seq) WHERE resolution_seq IS NOT NULL;

-- Superseded is a fact (superseded_by), not only a status: a renewed intent
-- that finance pays with a credit is paid, and stays renewed.
DO $$
DECLARE c TEXT;
BEGIN
    FOR c IN SELECT conname FROM pg_constraint WHERE conrelid = 'intents'::regclass AND contype = 'c'
        AND pg_get_constraintdef(oid) LIKE '%superseded_by IS NOT NULL%' LOOP
        EXECUTE format('ALTER TABLE intents DROP CONSTRAINT %I', c);
    END LOOP;
END $$;
ALTER TABLE intents ADD CONSTRAINT intents_superseded_renewed CHECK (status <> 'superseded' OR superseded_by IS NOT NULL);

-- The history a reconciliation as of a past time reads keeps both parts.
ALTER TABLE transfer_history
    ADD COLUMN settled  NUMERIC(78, 0),
    ADD COLUMN resolved NUMERIC(78, 0);

CREATE OR REPLACE FUNCTION paywatch_transfer_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM transfer_history WHERE transfer_id = OLD.id) THEN
        INSERT INTO transfer_history (transfer_id, recorded_at, intent_id, classification, status, block_height, block_hash, confirmed_at, credited, settled, resolved)
        VALUES (OLD.id, OLD.created_at, OLD.intent_id, OLD.classification, OLD.status, OLD.block_height, OLD.block_hash, OLD.confirmed_at, OLD.credited, OLD.settled, OLD.resolved);
    END IF;
    INSERT INTO transfer_history (transfer_id, recorded_at, intent_id, classification, status, block_height, block_hash, confirmed_at, credited, settled, resolved)
    VALUES (NEW.id, NEW.updated_at, NEW.intent_id, NEW.classification, NEW.status, NEW.block_height, NEW.block_hash, NEW.confirmed_at, NEW.credited, NEW.settled, NEW.resolved);
    RETURN NULL;
END;
$$;
DROP TRIGGER transfers_history ON transfers;
CREATE TRIGGER transfers_history AFTER UPDATE ON transfers
    FOR EACH ROW WHEN ((OLD.intent_id, OLD.classification, OLD.status, OLD.block_height, OLD.block_hash, OLD.confirmed_at, OLD.credited, OLD.settled, OLD.resolved)
        IS DISTINCT FROM (NEW.intent_id, NEW.classification, NEW.status, NEW.block_height, NEW.block_hash, NEW.confirmed_at, NEW.credited, NEW.settled, NEW.resolved))
    EXECUTE FUNCTION paywatch_transfer_history();

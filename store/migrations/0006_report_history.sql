-- Reproducible reports. A reconciliation as of a time T shows every
-- transfer recorded by T as it stood at T, so each change to what a report
-- shows is kept with the time it was recorded (the writer's `now`, which
-- every write of these tables stores in updated_at):
--   transfer_history  a transfer's intent, classification, status, block,
--                     confirmation time and credited flag, per change;
--   intent_history    an intent's status, per change;
--   node_heights      each network's node height, per change (the
--                     confirmations of a transfer at T);
-- resolutions already carry created_at and are never changed. The rows are
-- written by triggers, so no writer can change a transfer, an intent or a
-- cursor without its history. The state at T is the history row with the
-- latest (recorded_at, seq) at or before T.

CREATE TABLE transfer_history (
    seq            BIGSERIAL PRIMARY KEY,
    transfer_id    TEXT NOT NULL REFERENCES transfers (id),
    recorded_at    TIMESTAMPTZ NOT NULL,
    intent_id      TEXT,
    classification TEXT NOT NULL,
    status         TEXT NOT NULL,
    block_height   BIGINT,
    block_hash     TEXT,
    confirmed_at   TIMESTAMPTZ,
    credited       BOOLEAN NOT NULL
);
CREATE INDEX transfer_history_as_of ON transfer_history (transfer_id, recorded_at DESC, seq DESC);
CREATE INDEX transfer_history_intent ON transfer_history (intent_id) WHERE intent_id IS NOT NULL;

-- Only changes write history, so recording a transfer (or creating an
-- intent) costs nothing more. The first change of a row also records the
-- state it replaces, as of the row's created_at: until then nothing it
-- tracks had changed. A row without history has had its current state
-- since it was created.
CREATE FUNCTION paywatch_transfer_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM transfer_history WHERE transfer_id = OLD.id) THEN
        INSERT INTO transfer_history (transfer_id, recorded_at, intent_id, classification, status, block_height, block_hash, confirmed_at, credited)
        VALUES (OLD.id, OLD.created_at, OLD.intent_id, OLD.classification, OLD.status, OLD.block_height, OLD.block_hash, OLD.confirmed_at, OLD.credited);
    END IF;
    INSERT INTO transfer_history (transfer_id, recorded_at, intent_id, classification, status, block_height, block_hash, confirmed_at, credited)
    VALUES (NEW.id, NEW.updated_at, NEW.intent_id, NEW.classification, NEW.status, NEW.block_height, NEW.block_hash, NEW.confirmed_at, NEW.credited);
    RETURN NULL;
END;
$$;
CREATE TRIGGER transfers_history AFTER UPDATE ON transfers
    FOR EACH ROW WHEN ((OLD.intent_id, OLD.classification, OLD.status, OLD.block_height, OLD.block_hash, OLD.confirmed_at, OLD.credited)
        IS DISTINCT FROM (NEW.intent_id, NEW.classification, NEW.status, NEW.block_height, NEW.block_hash, NEW.confirmed_at, NEW.credited))
    EXECUTE FUNCTION paywatch_transfer_history();

CREATE TABLE intent_history (
    seq         BIGSERIAL PRIMARY KEY,
    intent_id   TEXT NOT NULL REFERENCES intents (id),
    recorded_at TIMESTAMPTZ NOT NULL,
    status      TEXT NOT NULL
);
CREATE INDEX intent_history_as_of ON intent_history (intent_id, recorded_at DESC, seq DESC);

CREATE FUNCTION paywatch_intent_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM intent_history WHERE intent_id = OLD.id) THEN
        INSERT INTO intent_history (intent_id, recorded_at, status) VALUES (OLD.id, OLD.created_at, OLD.status);
    END IF;
    INSERT INTO intent_history (intent_id, recorded_at, status) VALUES (NEW.id, NEW.updated_at, NEW.status);
    RETURN NULL;
END;
$$;
CREATE TRIGGER intents_history AFTER UPDATE OF status ON intents
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION paywatch_intent_history();

CREATE TABLE node_heights (
    seq         BIGSERIAL PRIMARY KEY,
    network     TEXT NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL,
    node_height BIGINT NOT NULL
);
CREATE INDEX node_heights_as_of ON node_heights (network, recorded_at DESC, seq DESC);

CREATE FUNCTION paywatch_node_height() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO node_heights (network, recorded_at, node_height) VALUES (NEW.network, NEW.updated_at, NEW.node_height);
    RETURN NULL;
END;
$$;
CREATE TRIGGER cursors_node_height_insert AFTER INSERT ON cursors
    FOR EACH ROW EXECUTE FUNCTION paywatch_node_height();
CREATE TRIGGER cursors_node_height_update AFTER UPDATE OF node_height ON cursors
    FOR EACH ROW WHEN (OLD.node_height IS DISTINCT FROM NEW.node_height) EXECUTE FUNCTION paywatch_node_height();

-- Cursors that exist already: their node height since their last update.
INSERT INTO node_heights (network, recorded_at, node_height) SELECT network, updated_at, node_height FROM cursors ORDER BY network;

-- A closed period: its reconciliation as rendered when finance closed it,
-- served as stored from then on. One close per period; never edited.
CREATE TABLE report_closes (
    id          TEXT PRIMARY KEY,
    period_from TIMESTAMPTZ NOT NULL,
    period_to   TIMESTAMPTZ NOT NULL,
    as_of       TIMESTAMPTZ NOT NULL,
    closed_by   TEXT NOT NULL CHECK (length(closed_by) BETWEEN 1 AND 200),
    closed_at   TIMESTAMPTZ NOT NULL,
    report_json BYTEA NOT NULL,
    report_csv  BYTEA NOT NULL,
    UNIQUE (period_from, period_to),
    CHECK (period_to > period_from),
    CHECK (as_of >= period_to)
);

CREATE FUNCTION paywatch_report_closes_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'a closed report period is never changed or deleted (report_closes %)', OLD.id
        USING ERRCODE = 'check_violation';
END;
$$;
CREATE TRIGGER report_closes_immutable BEFORE UPDATE OR DELETE ON report_closes
    FOR EACH ROW EXECUTE FUNCTION paywatch_report_closes_immutable();

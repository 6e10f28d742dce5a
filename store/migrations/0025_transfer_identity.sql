-- A transfer is the transaction's, and its content the best chain's
-- (issue 32 items 1 and 2).
--
-- 1. Identity. A transfer's natural key (network, txid, idx) is a function
-- of the transaction alone: idx is a position inside the transaction (a
-- Bitcoin/Litecoin output, a Solana account, a Tron log or internal
-- transaction, an Ethereum call frame) on every chain. Ethereum token
-- transfers were the exception: their idx was the receipt log's logIndex,
-- the log's position in the BLOCK, so the same transaction mined again at
-- another position was recorded as a second transfer. From now on it is
-- the log's position among its transaction's receipt logs.
--
-- The stored rows cannot be recomputed here: the tx-local position needs
-- the transaction's other logs (another contract's, an Approval), which
-- paywatch never stored. They are moved out of the way instead: idx +
-- 2^40 (1099511627776; no transaction has that many logs), so that no
-- legacy key can collide with a tx-local one. When the scanner sees such
-- a transaction again (a rescan, a reorg, a reconcile run does not write),
-- UpsertTransfer re-keys the legacy row in place (same id, first-seen time,
-- record order and decisions: the lowest legacy idx of the transaction
-- with the same asset and address takes the first tx-local key recorded)
-- instead of inserting a second row. Rows never seen again keep the
-- shifted key; the API shows it as their index.
UPDATE transfers SET idx = idx + 1099511627776
    WHERE network = 'ethereum' AND asset <> 'native' AND idx >= 0 AND idx < 1099511627776;
UPDATE reconcile_findings SET idx = idx + 1099511627776
    WHERE network = 'ethereum' AND idx >= 0 AND idx < 1099511627776
      AND EXISTS (SELECT 1 FROM transfers t WHERE t.network = 'ethereum' AND t.txid = reconcile_findings.txid
          AND t.idx = reconcile_findings.idx + 1099511627776);
CREATE INDEX transfers_legacy_key ON transfers (network, txid) WHERE idx >= 1099511627776;

-- 2. Content. A transaction mined again may execute against other state
-- and move another amount (to another of our addresses, or another asset)
-- under the same key. What the best chain moved is the transfer: the
-- scanner's upsert replaces amount, asset and address, stamps
-- reexecuted_at, and the content it replaced is kept here as history.
ALTER TABLE transfers ADD COLUMN reexecuted_at TIMESTAMPTZ;

CREATE TABLE transfer_contents (
    seq         BIGSERIAL PRIMARY KEY,
    transfer_id TEXT NOT NULL REFERENCES transfers (id) ON DELETE CASCADE,
    replaced_at TIMESTAMPTZ NOT NULL,
    asset       TEXT NOT NULL,
    address     TEXT NOT NULL,
    address_key BYTEA NOT NULL,
    amount      NUMERIC(78, 0) NOT NULL,
    intent_id   TEXT,
    block_hash  TEXT
);
CREATE INDEX transfer_contents_transfer ON transfer_contents (transfer_id, seq);

CREATE FUNCTION paywatch_transfer_contents() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO transfer_contents (transfer_id, replaced_at, asset, address, address_key, amount, intent_id, block_hash)
    VALUES (OLD.id, NEW.updated_at, OLD.asset, OLD.address, OLD.address_key, OLD.amount, OLD.intent_id, OLD.block_hash);
    RETURN NULL;
END;
$$;
CREATE TRIGGER transfers_contents AFTER UPDATE ON transfers
    FOR EACH ROW WHEN ((OLD.amount, OLD.asset, OLD.address_key) IS DISTINCT FROM (NEW.amount, NEW.asset, NEW.address_key))
    EXECUTE FUNCTION paywatch_transfer_contents();

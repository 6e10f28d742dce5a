-- Money out: webhook delivery outcomes and lookups for the finance inbox,
-- the ledger and the reconciliation report.

-- Each attempt records what it led to: delivered (the cursor moved past the
-- event), retry (it will be tried again after next_attempt_at), failed (the
-- retry window passed: the endpoint moved on; an operator can redeliver) or
-- redeliver (an operator moved the cursor back).
ALTER TABLE webhook_attempts
    ADD COLUMN outcome TEXT NOT NULL DEFAULT 'retry' CHECK (outcome IN ('delivered', 'retry', 'failed', 'redeliver')),
    ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1 CHECK (attempt >= 0);

CREATE INDEX transfers_first_seen ON transfers (first_seen_at, id);
CREATE INDEX ledger_entries_intent ON ledger_entries (intent_id) WHERE intent_id IS NOT NULL;
CREATE INDEX events_type_seq ON events (type, seq);

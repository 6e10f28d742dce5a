-- A transaction appends the events it queued in one call (issue 37 item 3):
-- a decision's events (transfer.unmatched, intent.*, ledger.*) are of
-- several types, which paywatch_append_events (one type) could not take,
-- so each was a call of paywatch_append_event with its own lock, insert
-- and notification. The events get consecutive seqs in the order given,
-- each its own type and time; the lock is taken once and held until
-- commit, and one notification carries the last seq (readers re-read on
-- any wake).
CREATE FUNCTION paywatch_append_typed_events(p_ids TEXT[], p_types TEXT[], p_intents TEXT[], p_transfers TEXT[],
                                             p_accounts TEXT[], p_data JSONB[], p_ats TIMESTAMPTZ[]) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
    v_seq BIGINT;
BEGIN
    PERFORM pg_advisory_xact_lock(7303202);
    WITH appended AS (
        INSERT INTO events (id, type, intent_id, transfer_id, account, data, created_at)
        SELECT id, type, NULLIF(intent, ''), NULLIF(transfer, ''), NULLIF(account, ''), data, at
        FROM unnest(p_ids, p_types, p_intents, p_transfers, p_accounts, p_data, p_ats)
            WITH ORDINALITY AS u(id, type, intent, transfer, account, data, at, n)
        ORDER BY n
        RETURNING seq)
    SELECT max(seq) INTO v_seq FROM appended;
    IF v_seq IS NOT NULL THEN
        PERFORM pg_notify('paywatch_events', v_seq::TEXT);
    END IF;
    RETURN v_seq;
END;
$$;

-- Batched intent creation (issue 11 item 5): a batch of creations appends
-- its events in one call, which takes the event lock once and notifies
-- once, where paywatch_append_event per event did both per event. The
-- events get consecutive seqs in the order given; the lock is held until
-- commit as for one event, so seq order stays commit order.
CREATE FUNCTION paywatch_append_events(p_ids TEXT[], p_type TEXT, p_intents TEXT[], p_transfers TEXT[], p_accounts TEXT[],
                                       p_data JSONB[], p_at TIMESTAMPTZ) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
    v_seq BIGINT;
BEGIN
    PERFORM pg_advisory_xact_lock(7303202);
    WITH appended AS (
        INSERT INTO events (id, type, intent_id, transfer_id, account, data, created_at)
        SELECT id, p_type, NULLIF(intent, ''), NULLIF(transfer, ''), NULLIF(account, ''), data, p_at
        FROM unnest(p_ids, p_intents, p_transfers, p_accounts, p_data) WITH ORDINALITY AS u(id, intent, transfer, account, data, n)
        ORDER BY n
        RETURNING seq)
    SELECT max(seq) INTO v_seq FROM appended;
    IF v_seq IS NOT NULL THEN
        PERFORM pg_notify('paywatch_events', v_seq::TEXT);
    END IF;
    RETURN v_seq;
END;
$$;

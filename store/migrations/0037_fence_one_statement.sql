-- paywatch_fence in one statement (issue 37 item 3). Every write of a
-- scanner calls it first (migration 0026), so it ran two statements per
-- transaction: the idle timeout's set_config, then the lease row's check.
-- The set_config is now evaluated by the check itself, on the lease row it
-- finds. What it leaves is the same: a held lease sets the timeout and
-- locks the row FOR KEY SHARE; a lost one raises PW001, and the abort
-- undoes a setting made on the way (a transaction's set_config ends with
-- it), as it undid the earlier set_config before.
CREATE OR REPLACE FUNCTION paywatch_fence(p_name TEXT, p_token BIGINT, p_idle_ms BIGINT) RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
BEGIN
    IF p_name IS NULL THEN
        RETURN true; -- no fence: a write that is not a leader's
    END IF;
    PERFORM 1 FROM leases WHERE name = p_name AND token = p_token AND expires_at > now()
        AND CASE WHEN p_idle_ms > 0 THEN set_config('idle_in_transaction_session_timeout', p_idle_ms::text, true) IS NOT NULL ELSE true END
        FOR KEY SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'lease % token % is no longer held: another instance leads', p_name, p_token
            USING ERRCODE = 'PW001';
    END IF;
    RETURN true;
END $$;

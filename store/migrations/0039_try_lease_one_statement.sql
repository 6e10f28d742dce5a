-- paywatch_try_lease takes a lease in one statement (issue 37 item 3).
-- TryLease was a transaction of its own: BEGIN, the lock timeout's
-- set_config, the row's insert when missing, its check FOR UPDATE, the
-- takeover's update, COMMIT: six round trips, paid by every standby's try
-- and every takeover. The function does the same in the statement's own
-- transaction: lock_timeout is the TTL for that transaction only (a leader
-- frozen inside a fenced transaction holds the row FOR KEY SHARE until the
-- server ends its session: the takeover waits that long at most, and then
-- fails with 55P03, which TryLease answers as "not taken"); a missing row
-- is inserted expired; the row is locked FOR UPDATE and taken only when it
-- has expired by clock_timestamp(), with the token incremented. It returns
-- the new token, or NULL while the lease is held.
CREATE FUNCTION paywatch_try_lease(p_name TEXT, p_holder TEXT, p_ttl_ms BIGINT) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
    v_held BOOLEAN;
    v_token BIGINT;
BEGIN
    PERFORM set_config('lock_timeout', p_ttl_ms::text, true);
    INSERT INTO leases (name, holder, token, expires_at, acquired_at, renewed_at)
        VALUES (p_name, '', 0, '-infinity', now(), now()) ON CONFLICT (name) DO NOTHING;
    SELECT expires_at > clock_timestamp() INTO STRICT v_held FROM leases WHERE name = p_name FOR UPDATE;
    IF v_held THEN
        RETURN NULL;
    END IF;
    UPDATE leases SET holder = p_holder, token = token + 1,
        expires_at = clock_timestamp() + p_ttl_ms * interval '1 millisecond',
        acquired_at = clock_timestamp(), renewed_at = clock_timestamp()
        WHERE name = p_name RETURNING token INTO v_token;
    RETURN v_token;
END $$;

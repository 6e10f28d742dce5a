-- Leadership is a lease row, not a session advisory lock (issue 32 item 6).
-- A frozen leader (SIGSTOP, a VM pause: its sockets stay open) kept its
-- session's advisory lock for as long as it was frozen, and nothing moved.
-- A lease now has an expiry computed by the database's clock, renewed by
-- its holder; a standby takes an expired lease and the takeover increments
-- the token. Every transaction a leader writes in calls paywatch_fence
-- first: it fails (SQLSTATE PW001) unless the caller's token is still the
-- lease's and the lease has not expired, and it holds the row FOR KEY
-- SHARE until the transaction ends. The takeover locks the row FOR UPDATE,
-- so it waits for every leader transaction in flight: a write of the old
-- leader commits before the new leader's token exists, or not at all.
-- (name, token) is unique, so the token is a key column: a renewal, which
-- changes only expires_at, never waits for the leader's own writes.
CREATE TABLE leases (
    name        TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    token       BIGINT NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    acquired_at TIMESTAMPTZ NOT NULL,
    renewed_at  TIMESTAMPTZ NOT NULL,
    CONSTRAINT leases_token UNIQUE (name, token),
    CONSTRAINT leases_token_positive CHECK (token >= 0)
);

-- paywatch_fence(name, token, idle_ms) returns true or raises PW001 (a
-- NULL name fences nothing). A
-- leader frozen inside a transaction would hold its locks (the row lock
-- here, the cursor's) for as long as it is frozen: the transaction is
-- given an idle_in_transaction_session_timeout of idle_ms, so the server
-- ends such a session and the takeover proceeds.
CREATE FUNCTION paywatch_fence(p_name TEXT, p_token BIGINT, p_idle_ms BIGINT) RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
BEGIN
    IF p_name IS NULL THEN
        RETURN true; -- no fence: a write that is not a leader's
    END IF;
    IF p_idle_ms > 0 THEN
        PERFORM set_config('idle_in_transaction_session_timeout', p_idle_ms::text, true);
    END IF;
    PERFORM 1 FROM leases WHERE name = p_name AND token = p_token AND expires_at > now() FOR KEY SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'lease % token % is no longer held: another instance leads', p_name, p_token
            USING ERRCODE = 'PW001';
    END IF;
    RETURN true;
END $$;

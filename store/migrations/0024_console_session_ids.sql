-- Console sessions get a public id and a last use (issue 22 items 7):
-- an operator can list the live sessions and end one without its secret
-- (`paywatch sessions end cs_…`), and a session unused for
-- console.idle_timeout ends before its absolute expiry.
--
-- The id is "cs_" and the first 10 bytes of the stored SHA-256 of the
-- token, in hex: it names the session, and tells nothing of the token.
ALTER TABLE console_sessions ADD COLUMN id TEXT, ADD COLUMN last_seen_at TIMESTAMPTZ;
UPDATE console_sessions SET id = 'cs_' || encode(substring(hash FROM 1 FOR 10), 'hex'), last_seen_at = created_at;
ALTER TABLE console_sessions
    ALTER COLUMN id SET NOT NULL,
    ALTER COLUMN last_seen_at SET NOT NULL,
    ADD CONSTRAINT console_sessions_id UNIQUE (id),
    ADD CONSTRAINT console_sessions_id_format CHECK (id ~ '^cs_[0-9a-f]{20}$'),
    ADD CONSTRAINT console_sessions_seen CHECK (last_seen_at >= created_at);

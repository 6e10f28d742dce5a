-- The console (console/): browser sessions and sandbox one-time sign-in
-- tokens. Only SHA-256 hashes of the secrets are stored; a session belongs to
-- the API key it was opened with, so revoking the key ends its sessions.
CREATE TABLE console_sessions (
    hash        BYTEA PRIMARY KEY CHECK (length(hash) = 32),
    api_key_id  TEXT NOT NULL REFERENCES api_keys (id),
    created_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    CHECK (expires_at > created_at)
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);

CREATE TABLE console_signin_tokens (
    hash        BYTEA PRIMARY KEY CHECK (length(hash) = 32),
    api_key_id  TEXT NOT NULL REFERENCES api_keys (id),
    created_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    used_at     TIMESTAMPTZ,
    CHECK (expires_at > created_at)
);

-- The console's search (address, txid) and intent timeline (events of an
-- intent or of its transfers).
CREATE INDEX console_intents_address ON intents (address);
CREATE INDEX console_transfers_txid ON transfers (txid);
CREATE INDEX console_events_intent ON events (intent_id) WHERE intent_id IS NOT NULL;
CREATE INDEX console_events_transfer ON events (transfer_id) WHERE transfer_id IS NOT NULL;

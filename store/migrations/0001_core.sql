-- paywatch core schema. Every invariant of DESIGN.md that a constraint can
-- hold is a constraint here; amounts are integers (NUMERIC(78,0) base units,
-- BIGINT cents), never floats.

CREATE TABLE payables (
    id             BIGSERIAL PRIMARY KEY,
    kind           TEXT NOT NULL CHECK (kind IN ('order', 'topup')),
    reference      TEXT NOT NULL CHECK (length(reference) BETWEEN 1 AND 200),
    account        TEXT CHECK (account IS NULL OR length(account) BETWEEN 1 AND 200),
    amount_cents   BIGINT NOT NULL CHECK (amount_cents > 0),
    paid_by_intent TEXT,
    paid_by_entry  TEXT,
    paid_at        TIMESTAMPTZ,
    created_at     TIMESTAMPTZ NOT NULL,
    UNIQUE (kind, reference),
    CHECK (kind <> 'topup' OR account IS NOT NULL),
    -- Paid by exactly one thing (an intent, or a ledger debit), or unpaid.
    CHECK (num_nonnulls(paid_by_intent, paid_by_entry) = CASE WHEN paid_at IS NULL THEN 0 ELSE 1 END),
    CHECK (kind = 'order' OR paid_by_entry IS NULL)
);

CREATE TABLE intents (
    id                     TEXT PRIMARY KEY,
    payable_id             BIGINT NOT NULL REFERENCES payables (id),
    method                 TEXT NOT NULL CHECK (method IN ('BTC', 'LTC', 'ETH', 'USDT-ERC20', 'USDC-ERC20', 'TRX', 'USDT-TRC20', 'SOL')),
    network                TEXT NOT NULL CHECK (network IN ('bitcoin', 'litecoin', 'ethereum', 'tron', 'solana')),
    asset                  TEXT NOT NULL,
    amount                 NUMERIC(78, 0) NOT NULL CHECK (amount > 0),
    tolerance              NUMERIC(78, 0) NOT NULL DEFAULT 0 CHECK (tolerance >= 0 AND tolerance < amount),
    dust_min               NUMERIC(78, 0) NOT NULL DEFAULT 0 CHECK (dust_min >= 0),
    address                TEXT NOT NULL,
    address_key            BYTEA NOT NULL,
    rate                   NUMERIC NOT NULL CHECK (rate > 0),
    rate_sources           TEXT[] NOT NULL,
    rate_at                TIMESTAMPTZ NOT NULL,
    expires_at             TIMESTAMPTZ NOT NULL,
    status                 TEXT NOT NULL CHECK (status IN ('awaiting_payment', 'detected', 'paid', 'expired', 'underpaid', 'superseded', 'reverted')),
    overpaid               BOOLEAN NOT NULL DEFAULT FALSE,
    late                   BOOLEAN NOT NULL DEFAULT FALSE,
    received               NUMERIC(78, 0) NOT NULL DEFAULT 0 CHECK (received >= 0),
    confirmed_sum          NUMERIC(78, 0) NOT NULL DEFAULT 0 CHECK (confirmed_sum >= 0),
    confirmations_required INTEGER NOT NULL CHECK (confirmations_required >= 0),
    reported_at            TIMESTAMPTZ,
    detected_at            TIMESTAMPTZ,
    paid_at                TIMESTAMPTZ,
    renewed_from           TEXT REFERENCES intents (id),
    superseded_by          TEXT REFERENCES intents (id),
    created_at             TIMESTAMPTZ NOT NULL,
    updated_at             TIMESTAMPTZ NOT NULL,
    UNIQUE (network, address_key),
    UNIQUE (network, address),
    CHECK ((status = 'superseded') = (superseded_by IS NOT NULL)),
    CHECK (status <> 'paid' OR paid_at IS NOT NULL)
);
-- At most one paying intent per payable.
CREATE UNIQUE INDEX intents_one_paid_per_payable ON intents (payable_id) WHERE status = 'paid';
CREATE INDEX intents_payable ON intents (payable_id);
CREATE INDEX intents_open_deadline ON intents (expires_at) WHERE status IN ('awaiting_payment', 'detected');

-- The watched set: every address ever issued or pre-derived, with its binary
-- key. intent_id is set when the address is handed out, never reset.
CREATE TABLE addresses (
    network          TEXT NOT NULL,
    key              BYTEA NOT NULL,
    address          TEXT NOT NULL,
    source           TEXT NOT NULL,
    derivation_index BIGINT CHECK (derivation_index IS NULL OR derivation_index >= 0),
    intent_id        TEXT UNIQUE,
    created_at       TIMESTAMPTZ NOT NULL,
    assigned_at      TIMESTAMPTZ,
    PRIMARY KEY (network, key),
    UNIQUE (network, address),
    UNIQUE (network, source, derivation_index),
    CHECK ((intent_id IS NULL) = (assigned_at IS NULL))
);
CREATE INDEX addresses_free_pool ON addresses (network, created_at) WHERE intent_id IS NULL AND derivation_index IS NULL;

-- One index counter per (network, account key): the next index to hand out.
CREATE TABLE derivation_counters (
    network    TEXT NOT NULL,
    source     TEXT NOT NULL,
    next_index BIGINT NOT NULL CHECK (next_index >= 0),
    PRIMARY KEY (network, source)
);

-- Scanner state per network: the cursor (height, hash) and health.
CREATE TABLE cursors (
    network        TEXT PRIMARY KEY,
    height         BIGINT NOT NULL CHECK (height >= 0),
    hash           TEXT NOT NULL,
    node_height    BIGINT NOT NULL DEFAULT 0,
    final_height   BIGINT NOT NULL DEFAULT 0,
    last_block_at  TIMESTAMPTZ,
    healthy        BOOLEAN NOT NULL DEFAULT TRUE,
    last_error     TEXT NOT NULL DEFAULT '',
    critical       TEXT NOT NULL DEFAULT '',
    leader         TEXT NOT NULL DEFAULT '',
    rescan_from    BIGINT,
    updated_at     TIMESTAMPTZ NOT NULL
);

-- Recent block refs per network, for the parent-hash check and reorg walk-back.
CREATE TABLE blocks (
    network     TEXT NOT NULL,
    height      BIGINT NOT NULL CHECK (height >= 0),
    hash        TEXT NOT NULL,
    parent_hash TEXT NOT NULL,
    time        TIMESTAMPTZ,
    PRIMARY KEY (network, height)
);

CREATE TABLE transfers (
    id                     TEXT PRIMARY KEY,
    network                TEXT NOT NULL,
    txid                   TEXT NOT NULL,
    idx                    BIGINT NOT NULL,
    asset                  TEXT NOT NULL,
    address                TEXT NOT NULL,
    address_key            BYTEA NOT NULL,
    amount                 NUMERIC(78, 0) NOT NULL CHECK (amount >= 0),
    intent_id              TEXT REFERENCES intents (id),
    block_height           BIGINT,
    block_hash             TEXT,
    first_seen_at          TIMESTAMPTZ NOT NULL,
    status                 TEXT NOT NULL CHECK (status IN ('pending', 'confirming', 'confirmed', 'orphaned')),
    confirmations_required INTEGER NOT NULL CHECK (confirmations_required >= 0),
    confirmed_at           TIMESTAMPTZ,
    classification         TEXT NOT NULL CHECK (classification IN ('settles', 'partial', 'overpaid', 'late', 'duplicate', 'wrong_asset', 'unknown_address', 'dust', 'reverted')),
    credited               BOOLEAN NOT NULL DEFAULT FALSE,
    -- The classification a transfer.unmatched event was last emitted for, so
    -- finance hears of each transfer once per classification.
    notified_class         TEXT,
    created_at             TIMESTAMPTZ NOT NULL,
    updated_at             TIMESTAMPTZ NOT NULL,
    UNIQUE (network, txid, idx),
    CHECK ((block_height IS NULL) = (block_hash IS NULL)),
    CHECK (status <> 'pending' OR block_height IS NULL),
    CHECK (status NOT IN ('confirming', 'confirmed') OR block_height IS NOT NULL)
);
CREATE INDEX transfers_intent ON transfers (intent_id);
CREATE INDEX transfers_open ON transfers (network, block_height) WHERE status IN ('pending', 'confirming');
CREATE INDEX transfers_by_block ON transfers (network, block_height);
CREATE INDEX transfers_review ON transfers (created_at DESC, id DESC) WHERE classification <> 'settles';

-- A finance decision on a transfer: one per transfer, never a second.
CREATE TABLE resolutions (
    transfer_id TEXT PRIMARY KEY REFERENCES transfers (id),
    action      TEXT NOT NULL CHECK (action IN ('credit_intent', 'credit_account', 'refunded', 'ignore')),
    note        TEXT NOT NULL CHECK (length(btrim(note)) > 0),
    actor       TEXT NOT NULL,
    intent_id   TEXT REFERENCES intents (id),
    account     TEXT,
    amount_cents BIGINT CHECK (amount_cents IS NULL OR amount_cents >= 0),
    refund_txid TEXT,
    created_at  TIMESTAMPTZ NOT NULL,
    CHECK (action <> 'credit_intent' OR intent_id IS NOT NULL),
    CHECK (action <> 'credit_account' OR account IS NOT NULL),
    CHECK (action <> 'refunded' OR refund_txid IS NOT NULL)
);

-- Per-account balance (the running sum of its ledger entries) and the entries.
CREATE TABLE accounts (
    account       TEXT PRIMARY KEY,
    balance_cents BIGINT NOT NULL DEFAULT 0 CHECK (balance_cents >= 0),
    updated_at    TIMESTAMPTZ NOT NULL
);

CREATE TABLE ledger_entries (
    seq                 BIGSERIAL UNIQUE,
    id                  TEXT PRIMARY KEY,
    account             TEXT NOT NULL REFERENCES accounts (account),
    type                TEXT NOT NULL CHECK (type IN ('credit', 'debit', 'reversal')),
    amount_cents        BIGINT NOT NULL CHECK (amount_cents > 0),
    reference           TEXT NOT NULL,
    intent_id           TEXT REFERENCES intents (id),
    transfer_id         TEXT REFERENCES transfers (id),
    balance_after_cents BIGINT NOT NULL CHECK (balance_after_cents >= 0),
    unrecovered_cents   BIGINT NOT NULL DEFAULT 0 CHECK (unrecovered_cents >= 0),
    created_at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX ledger_entries_account ON ledger_entries (account, seq);
-- A debit pays one order reference once.
CREATE UNIQUE INDEX ledger_one_debit_per_reference ON ledger_entries (reference) WHERE type = 'debit';

-- Append-only event log, ordered by seq. Writers serialize on an advisory
-- lock just before commit so seq order is commit order.
CREATE TABLE events (
    seq        BIGSERIAL PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    type       TEXT NOT NULL,
    intent_id  TEXT,
    transfer_id TEXT,
    account    TEXT,
    data       JSONB NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);

-- append_event serializes writers on a transaction-scoped advisory lock
-- (held until commit, so seq order is commit order), inserts the event and
-- notifies listeners at commit: one round trip.
CREATE FUNCTION paywatch_append_event(p_id TEXT, p_type TEXT, p_intent TEXT, p_transfer TEXT, p_account TEXT,
                                      p_data JSONB, p_at TIMESTAMPTZ) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
    v_seq BIGINT;
BEGIN
    PERFORM pg_advisory_xact_lock(7303202);
    INSERT INTO events (id, type, intent_id, transfer_id, account, data, created_at)
    VALUES (p_id, p_type, NULLIF(p_intent, ''), NULLIF(p_transfer, ''), NULLIF(p_account, ''), p_data, p_at)
    RETURNING seq INTO v_seq;
    PERFORM pg_notify('paywatch_events', v_seq::TEXT);
    RETURN v_seq;
END;
$$;

CREATE INDEX addresses_free_derived ON addresses (network, source, derivation_index)
    WHERE intent_id IS NULL AND derivation_index IS NOT NULL;

CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 100),
    hash       BYTEA NOT NULL UNIQUE CHECK (length(hash) = 32),
    scopes     TEXT[] NOT NULL CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['storefront', 'finance', 'operator']::TEXT[]),
    created_at TIMESTAMPTZ NOT NULL,
    revoked_at TIMESTAMPTZ
);

CREATE TABLE idempotency_keys (
    api_key_id   TEXT NOT NULL REFERENCES api_keys (id),
    key          TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 200),
    request_hash BYTEA NOT NULL,
    status       INTEGER NOT NULL,
    response     BYTEA NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (api_key_id, key)
);

-- Webhook delivery state: one cursor per endpoint (deliveries are in seq
-- order, at least once), and a log of every attempt.
CREATE TABLE webhook_endpoints (
    name            TEXT PRIMARY KEY,
    url             TEXT NOT NULL,
    last_seq        BIGINT NOT NULL DEFAULT 0,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ,
    first_failed_at TIMESTAMPTZ,
    last_error      TEXT NOT NULL DEFAULT '',
    updated_at      TIMESTAMPTZ NOT NULL
);

CREATE TABLE webhook_attempts (
    id          BIGSERIAL PRIMARY KEY,
    endpoint    TEXT NOT NULL,
    event_seq   BIGINT NOT NULL,
    event_id    TEXT NOT NULL,
    status_code INTEGER,
    error       TEXT NOT NULL DEFAULT '',
    duration_ms INTEGER NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint, id DESC);

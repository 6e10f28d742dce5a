-- Issue 27: no payment missed, checked rather than believed.
--
-- A coinbase output (Bitcoin, Litecoin) is recorded like any transfer but
-- marked: it cannot be spent for 100 blocks (coinbase maturity) and it is
-- the first thing a reorg takes away, so it pays only once it has 100
-- confirmations (its confirmations_required is at least 100).
ALTER TABLE transfers ADD COLUMN coinbase BOOLEAN NOT NULL DEFAULT FALSE;

-- The reconciler (package reconcile) compares the node's own view of our
-- addresses over scanned ranges with what paywatch recorded. A difference
-- is a finding. kind: missing (the node shows a transfer we did not
-- record), unexpected (we recorded one the node does not show), mismatch
-- (both, with other amounts, assets or keys), node_error (the node answered
-- inconsistently or not at all: never a silent skip). status: rescanning
-- (a rescan of its range was requested; re-checked once the scanner has
-- passed it), open (for the operator: the rescan did not explain it, or a
-- node error), resolved. node_answer and ours are what each side said.
CREATE TABLE reconcile_findings (
    id           TEXT PRIMARY KEY,
    network      TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('missing', 'unexpected', 'mismatch', 'node_error')),
    -- what makes two findings the same: the transfer (txid:index) for a
    -- transfer difference, the range for a node error
    fingerprint  TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('rescanning', 'open', 'resolved')),
    txid         TEXT NOT NULL DEFAULT '',
    idx          BIGINT NOT NULL DEFAULT 0,
    address      TEXT NOT NULL DEFAULT '',
    address_key  BYTEA,
    block_height BIGINT,
    range_from   BIGINT NOT NULL,
    range_to     BIGINT NOT NULL CHECK (range_to >= range_from),
    node_answer  TEXT NOT NULL,
    ours         TEXT NOT NULL,
    resolution   TEXT NOT NULL DEFAULT '',
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL,
    resolved_at  TIMESTAMPTZ
);
-- One live finding per transfer (or per range for a node error): a finding
-- seen again by the next run is the same finding.
CREATE UNIQUE INDEX reconcile_findings_live ON reconcile_findings (network, kind, fingerprint)
    WHERE status <> 'resolved';
CREATE INDEX reconcile_findings_status ON reconcile_findings (status, network);

-- Per network: the reconciler's progress and last run, and a run asked
-- for on demand (CLI, operator API) that the daemon picks up.
CREATE TABLE reconcile_runs (
    network           TEXT PRIMARY KEY,
    checked_to        BIGINT,
    last_from         BIGINT,
    last_to           BIGINT,
    last_started_at   TIMESTAMPTZ,
    last_finished_at  TIMESTAMPTZ,
    last_blocks       BIGINT NOT NULL DEFAULT 0,
    last_addresses    BIGINT NOT NULL DEFAULT 0,
    last_calls        BIGINT NOT NULL DEFAULT 0,
    last_findings     BIGINT NOT NULL DEFAULT 0,
    last_error        TEXT NOT NULL DEFAULT '',
    runs              BIGINT NOT NULL DEFAULT 0,
    requested_at      TIMESTAMPTZ
);

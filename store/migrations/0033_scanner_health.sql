-- The health a scanner reported while its network had no cursor yet: its
-- node was refused before the first block was placed (a node on another
-- chain must not even place a cursor) or failed from the start. Without it
-- /v1/status said "not started yet" with no error and
-- paywatch_network_critical stayed 0 for a node on the wrong chain. Once the
-- cursor exists, the cursor's row is the network's health and this one is
-- history.
CREATE TABLE scanner_health (
    network    TEXT PRIMARY KEY,
    healthy    BOOLEAN NOT NULL,
    last_error TEXT NOT NULL,
    critical   TEXT NOT NULL,
    leader     TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

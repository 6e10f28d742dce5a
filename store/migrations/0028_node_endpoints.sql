-- Each node endpoint's state as each instance's endpoint pool saw it
-- (issue 33 item 6), recorded every few seconds so `paywatch status`,
-- which reads the database, lists them. Names only: an endpoint's URL and
-- credentials are never stored.
CREATE TABLE node_endpoints (
    network          TEXT NOT NULL,
    instance         TEXT NOT NULL,
    name             TEXT NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('healthy', 'lagging', 'throttled', 'unreachable', 'wrong_chain', 'over_budget')),
    head             BIGINT NOT NULL CHECK (head >= 0),
    lag              BIGINT NOT NULL,
    latency_ms       BIGINT NOT NULL CHECK (latency_ms >= 0),
    throttles        BIGINT NOT NULL CHECK (throttles >= 0),
    errors           BIGINT NOT NULL CHECK (errors >= 0),
    calls_per_minute BIGINT NOT NULL CHECK (calls_per_minute >= 0),
    budget_used      BIGINT NOT NULL CHECK (budget_used >= 0),
    daily_budget     BIGINT NOT NULL CHECK (daily_budget >= 0),
    updated_at       TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (network, instance, name)
);

-- Finance's credit_account is bounded by the rate book (issue 22, item 3).
--
-- rate_quotes keeps the rate book's quotes over time, one row per symbol and
-- quote time (the daemon records the quote of each symbol at every refresh),
-- so a decision taken days after a transfer compares its rate with the
-- quote of the transfer's time.
CREATE TABLE rate_quotes (
    symbol       TEXT NOT NULL,
    at           TIMESTAMPTZ NOT NULL,
    usd_per_unit NUMERIC NOT NULL CHECK (usd_per_unit > 0),
    sources      TEXT[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (symbol, at)
);

-- A credit_account records the rate it used, the rate book's quote it was
-- checked against (NULL: there was none) and, when the rate was outside the
-- bound, the override's reason.
ALTER TABLE resolutions
    ADD COLUMN usd_per_unit NUMERIC CHECK (usd_per_unit IS NULL OR usd_per_unit > 0),
    ADD COLUMN reference_usd_per_unit NUMERIC CHECK (reference_usd_per_unit IS NULL OR reference_usd_per_unit > 0),
    ADD COLUMN override_reason TEXT CHECK (override_reason IS NULL OR length(btrim(override_reason)) > 0);

-- Finer API key scopes (issue 22, item 4): read (storefront reads), intents
-- (create, report, renew intents) and debit (balance debits); storefront
-- keeps meaning all three. A key may be bound to an account prefix: it
-- then sees and touches only accounts that start with it.
ALTER TABLE api_keys DROP CONSTRAINT api_keys_scopes_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_check CHECK (cardinality(scopes) > 0
    AND scopes <@ ARRAY['storefront', 'read', 'intents', 'debit', 'finance', 'operator']::TEXT[]);
ALTER TABLE api_keys ADD COLUMN account_prefix TEXT
    CHECK (account_prefix IS NULL OR length(account_prefix) BETWEEN 1 AND 200);

-- Stores (issue 34): several shops on one paywatch, each with its own keys,
-- addresses, references, accounts, books and page. Every row that belongs
-- to a shop names its store; what was there before belongs to the store
-- 'default', so a database of one shop migrates with nothing lost and
-- behaves as it did.
--
-- Where a row's store follows from another row, a trigger fills it, so no
-- writer can file a row under another store than its source's:
--   intents from their payable, transfers from the address they pay,
--   events from their intent or transfer (an account-only event, a debit,
--   names its store), ledger entries name theirs (their account is the
--   store's).
CREATE TABLE stores (
    id           TEXT PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9_-]{0,39}$'),
    name         TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    -- The payment page's look: display name, logo, colour, the languages
    -- offered (empty: the page's catalogue), the hosts a return_url may
    -- name (empty: checkout.return_hosts).
    display_name TEXT NOT NULL DEFAULT '' CHECK (length(display_name) <= 200),
    logo_url     TEXT NOT NULL DEFAULT '' CHECK (length(logo_url) <= 2000),
    colour       TEXT NOT NULL DEFAULT '' CHECK (colour = '' OR colour ~ '^#[0-9a-fA-F]{6}$'),
    languages    TEXT[] NOT NULL DEFAULT '{}',
    return_hosts TEXT[] NOT NULL DEFAULT '{}',
    -- Confirmations and tolerance where they differ from the networks'
    -- defaults: {"confirmations": {"btc": 2}, "tolerance_bps": 50}.
    settings     JSONB NOT NULL DEFAULT '{}',
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);
INSERT INTO stores (id, name, created_at, updated_at) VALUES ('default', 'default', now(), now());

-- A store's extended public keys (and, for Solana, its pool lane). The
-- default store's keys stay networks.<n>.account_key in the config.
CREATE TABLE store_keys (
    store_id    TEXT NOT NULL REFERENCES stores (id),
    network     TEXT NOT NULL,
    account_key TEXT NOT NULL CHECK (length(account_key) BETWEEN 1 AND 200),
    fingerprint TEXT NOT NULL,
    added_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (store_id, network),
    -- One key, one store: money never lands on another store's addresses.
    UNIQUE (network, fingerprint)
);

-- Payables: references are a namespace per store.
ALTER TABLE payables ADD COLUMN store_id TEXT NOT NULL DEFAULT 'default' REFERENCES stores (id);
ALTER TABLE payables DROP CONSTRAINT payables_kind_reference_key;
ALTER TABLE payables ADD CONSTRAINT payables_store_kind_reference_key UNIQUE (store_id, kind, reference);

-- Intents: the store of their payable.
ALTER TABLE intents ADD COLUMN store_id TEXT NOT NULL DEFAULT 'default';
CREATE FUNCTION paywatch_intent_store() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT store_id INTO NEW.store_id FROM payables WHERE id = NEW.payable_id;
    RETURN NEW;
END $$;
CREATE TRIGGER intents_store BEFORE INSERT ON intents
    FOR EACH ROW EXECUTE FUNCTION paywatch_intent_store();
CREATE INDEX intents_store_created ON intents (store_id, created_at DESC) WHERE store_id <> 'default';

-- Addresses: the store whose key derived them (or whose pool they are).
-- A store's Solana pool is its own lane of free_addresses ('' stays the
-- default store's pool).
ALTER TABLE addresses ADD COLUMN store_id TEXT NOT NULL DEFAULT 'default';
CREATE OR REPLACE FUNCTION free_addresses_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO free_addresses (network, lane, ord, key)
        SELECT network,
               CASE WHEN derivation_index IS NOT NULL THEN source
                    WHEN store_id = 'default' THEN ''
                    ELSE 'pool:' || store_id END,
               coalesce(derivation_index, seq), key
        FROM changed_rows;
    RETURN NULL;
END $$;

-- Transfers: the store of the address they pay.
ALTER TABLE transfers ADD COLUMN store_id TEXT NOT NULL DEFAULT 'default';
CREATE FUNCTION paywatch_transfer_store() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.store_id := coalesce((SELECT store_id FROM addresses WHERE network = NEW.network AND key = NEW.address_key), 'default');
    RETURN NEW;
END $$;
CREATE TRIGGER transfers_store BEFORE INSERT ON transfers
    FOR EACH ROW EXECUTE FUNCTION paywatch_transfer_store();
CREATE INDEX transfers_store_created ON transfers (store_id, created_at DESC) WHERE store_id <> 'default';

-- Accounts and the ledger: accounts are a namespace per store; a debit
-- pays one order reference of its store once.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_account_fkey;
ALTER TABLE accounts ADD COLUMN store_id TEXT NOT NULL DEFAULT 'default' REFERENCES stores (id);
ALTER TABLE accounts DROP CONSTRAINT accounts_pkey;
ALTER TABLE accounts ADD PRIMARY KEY (store_id, account);
ALTER TABLE ledger_entries ADD COLUMN store_id TEXT NOT NULL DEFAULT 'default';
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_account_fkey
    FOREIGN KEY (store_id, account) REFERENCES accounts (store_id, account);
DROP INDEX ledger_entries_account;
CREATE INDEX ledger_entries_account ON ledger_entries (store_id, account, seq);
DROP INDEX ledger_one_debit_per_reference;
CREATE UNIQUE INDEX ledger_one_debit_per_reference ON ledger_entries (store_id, reference) WHERE type = 'debit';

-- Events: the store of their intent, else of their transfer, else the one
-- the writer names (a debit's), else the default store.
ALTER TABLE events ADD COLUMN store_id TEXT NOT NULL DEFAULT 'default';
CREATE FUNCTION paywatch_event_store() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.intent_id IS NOT NULL THEN
        SELECT store_id INTO NEW.store_id FROM intents WHERE id = NEW.intent_id;
    ELSIF NEW.transfer_id IS NOT NULL THEN
        SELECT store_id INTO NEW.store_id FROM transfers WHERE id = NEW.transfer_id;
    END IF;
    NEW.store_id := coalesce(NEW.store_id, 'default');
    RETURN NEW;
END $$;
CREATE TRIGGER events_store BEFORE INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION paywatch_event_store();
CREATE INDEX events_store_seq ON events (store_id, seq) WHERE store_id <> 'default';

CREATE FUNCTION paywatch_append_store_event(p_id TEXT, p_type TEXT, p_intent TEXT, p_transfer TEXT, p_account TEXT,
                                            p_data JSONB, p_at TIMESTAMPTZ, p_store TEXT) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
    v_seq BIGINT;
BEGIN
    PERFORM pg_advisory_xact_lock(7303202);
    INSERT INTO events (id, type, intent_id, transfer_id, account, data, created_at, store_id)
    VALUES (p_id, p_type, NULLIF(p_intent, ''), NULLIF(p_transfer, ''), NULLIF(p_account, ''), p_data, p_at, NULLIF(p_store, ''))
    RETURNING seq INTO v_seq;
    PERFORM pg_notify('paywatch_events', v_seq::TEXT);
    RETURN v_seq;
END;
$$;

-- API keys belong to one store, or (NULL) to every store: the operator's.
ALTER TABLE api_keys ADD COLUMN store_id TEXT REFERENCES stores (id);

-- Webhook endpoints hear one store's events, or (NULL) every store's.
ALTER TABLE webhook_endpoints ADD COLUMN store_id TEXT REFERENCES stores (id);

-- Period closes are per store.
ALTER TABLE report_closes ADD COLUMN store_id TEXT NOT NULL DEFAULT 'default' REFERENCES stores (id);
ALTER TABLE report_closes DROP CONSTRAINT report_closes_period_from_period_to_key;
ALTER TABLE report_closes ADD CONSTRAINT report_closes_store_period_key UNIQUE (store_id, period_from, period_to);

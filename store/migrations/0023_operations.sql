-- Operations metrics (issue 26): what reversals could not take back is
-- summed at every scrape; this index keeps that to the few rows concerned.
CREATE INDEX ledger_entries_unrecovered ON ledger_entries (seq) WHERE unrecovered_cents > 0 OR type = 'recovery';

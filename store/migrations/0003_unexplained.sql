-- The balance check (Ethereum without tracing): an increase of an open
-- intent's address balance that no recorded transfer explains is recorded
-- as a transfer classified 'unexplained' (txid 'balance:<height>'). It never
-- pays an intent by itself; finance reviews it and may credit_intent it.
ALTER TABLE transfers DROP CONSTRAINT transfers_classification_check;
ALTER TABLE transfers ADD CONSTRAINT transfers_classification_check CHECK (classification IN
    ('settles', 'partial', 'overpaid', 'late', 'duplicate', 'wrong_asset', 'unknown_address', 'dust', 'reverted', 'unexplained'));

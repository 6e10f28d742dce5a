-- Issue 27: no payment missed, checked rather than believed.
--
-- A coinbase output (Bitcoin, Litecoin) is recorded like any transfer but
-- marked: it cannot be spent for 100 blocks (coinbase maturity) and it is
-- the first thing a reorg takes away, so it pays only once it has 100
-- confirmations (its confirmations_required is at least 100).
ALTER TABLE transfers ADD COLUMN coinbase BOOLEAN NOT NULL DEFAULT FALSE;

-- A re-credit of a top-up whose reversal could not take everything back
-- (unrecovered_cents > 0: the customer had spent it) first settles that
-- rest: a 'recovery' entry right after the credit, of the intent, taking
-- from the balance what the reversal could not. Balance = credits − debits
-- − recovered part of reversals − recoveries.
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_type_check;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_type_check
    CHECK (type IN ('credit', 'debit', 'reversal', 'recovery'));

-- A credit_intent decision that can no longer take effect (the payable was
-- paid by another intent or a debit when the credited transfer came back
-- or confirmed) is voided, not deleted: the transfer is a finance item
-- again and finance decides anew. At most one live decision per transfer.
ALTER TABLE resolutions ADD COLUMN voided_at TIMESTAMPTZ;
ALTER TABLE resolutions ADD COLUMN voided_reason TEXT;
ALTER TABLE resolutions DROP CONSTRAINT resolutions_pkey;
ALTER TABLE resolutions ADD COLUMN seq BIGSERIAL PRIMARY KEY;
CREATE UNIQUE INDEX resolutions_one_live ON resolutions (transfer_id) WHERE voided_at IS NULL;

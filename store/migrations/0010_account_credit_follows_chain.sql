-- A credit_account credit follows its transfer on the chain: reversed when
-- the transfer leaves it, credited again (with a recovery) when it comes
-- back. Those entries are found by transfer, net per transfer.
CREATE INDEX ledger_entries_transfer ON ledger_entries (transfer_id) WHERE transfer_id IS NOT NULL;

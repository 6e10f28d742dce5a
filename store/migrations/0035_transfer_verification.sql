-- A second source for large payments (issue 33 item 5). scanned_by is the
-- endpoint of the network's pool that served the block the transfer was
-- last seen in ('' when the network has one rpc_url or it is unknown): the
-- verifier asks another. verify_state is what the verifier found for the
-- transfer in that block: verified (another provider shows the same
-- destination, asset and amount at the required depth on its best chain),
-- pending (it cannot say yet: behind, unreachable), unseen (its best chain
-- has another block at that height, or the block lacks the transfer),
-- disagrees (it shows another destination, asset or amount), no_verifier
-- (no endpoint of another provider is configured). Only verified lets an
-- intent from networks.<n>.large_amount_usd be paid; a new block or new
-- content (a reorg, a re-execution) clears it.
ALTER TABLE transfers
    ADD COLUMN scanned_by        TEXT NOT NULL DEFAULT '',
    ADD COLUMN verify_state      TEXT CHECK (verify_state IN ('verified', 'pending', 'unseen', 'disagrees', 'no_verifier')),
    ADD COLUMN verify_endpoint   TEXT NOT NULL DEFAULT '',
    ADD COLUMN verify_detail     TEXT NOT NULL DEFAULT '',
    ADD COLUMN verify_checked_at TIMESTAMPTZ;


-- The verifier's work list is read from the intents in flight (detected:
-- a held one stays so; reverted: its payment mined again in another block
-- is verified again), a few, never by scanning every confirmed transfer.
CREATE INDEX intents_unsettled_network ON intents (network) WHERE status IN ('detected', 'reverted');

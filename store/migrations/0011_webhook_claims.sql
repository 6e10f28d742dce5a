-- Webhook deliveries POST outside any transaction: a sender first claims
-- the endpoint's next events (a token and an expiry, committed), POSTs,
-- then records each attempt in a second transaction that checks the token.
-- A crashed sender's claim expires and another takes the events over (they
-- are sent again: at least once); while a claim is live no other sender
-- POSTs to the endpoint.
ALTER TABLE webhook_endpoints
    ADD COLUMN claim_token   TEXT,
    ADD COLUMN claimed_until TIMESTAMPTZ,
    ADD CONSTRAINT webhook_endpoints_claim CHECK ((claim_token IS NULL) = (claimed_until IS NULL));

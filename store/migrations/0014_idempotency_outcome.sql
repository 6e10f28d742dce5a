-- An Idempotency-Key's stored response records what the command did (the
-- domain's outcome: 1 created, 2 applied; 0 while the first request runs),
-- not an HTTP status: the API alone maps an outcome to a status. Rows
-- written before this migration held the status the API answered.
UPDATE idempotency_keys SET status = CASE status WHEN 201 THEN 1 WHEN 200 THEN 2 ELSE status END;
COMMENT ON COLUMN idempotency_keys.status IS 'the command''s outcome: 0 running, 1 created, 2 applied';

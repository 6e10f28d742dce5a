-- Two indexes that every intent creation wrote to and nothing needs
-- (issue 11 item 5):
--
-- addresses.intent_id was UNIQUE (0001), so every pre-derived address put
-- its NULL into the constraint's index when inserted, and ten million
-- watched addresses kept ten million NULL entries. The partial unique index
-- holds the same rule (an intent has at most one address) over the
-- addresses handed out only.
CREATE UNIQUE INDEX addresses_assigned_intent ON addresses (intent_id) WHERE intent_id IS NOT NULL;
ALTER TABLE addresses DROP CONSTRAINT addresses_intent_id_key;

-- console_intents_address (0007) served the console's search by address;
-- the unique (network, address) index of 0001 serves it as well, searched
-- on each network (store.Search), so each new intent writes one index less.
DROP INDEX console_intents_address;

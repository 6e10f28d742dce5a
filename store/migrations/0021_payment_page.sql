-- The hosted payment page (issue 23): where the page's "back to the shop"
-- button leads once the intent is paid. The storefront gives it when it
-- creates the intent (POST /v1/intents return_url) and a renewal keeps it.
-- It is checked against checkout.return_hosts before it is stored, and again
-- before the page shows it. NULL: no button.
--
-- Nothing else about the page is stored: its capability token is derived
-- from the intent id with the server's secret (package checkout).
ALTER TABLE intents ADD COLUMN return_url TEXT
    CHECK (return_url IS NULL OR (length(return_url) BETWEEN 8 AND 2000 AND return_url ~ '^https?://'));

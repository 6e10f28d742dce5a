-- The payment page's language (issue 35 item 1): the storefront may give
-- it when it creates an intent (POST /v1/intents locale), a renewal keeps
-- it. One of the page's catalogue languages (checked before it is stored);
-- NULL: the customer's browser (Accept-Language) decides.
ALTER TABLE intents ADD COLUMN locale TEXT
    CHECK (locale IS NULL OR locale ~ '^[a-z]{2,3}$');

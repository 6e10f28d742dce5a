-- The payment page's language (issue 35 item 1): the storefront may give
-- it when it creates an intent (POST /v1/intents locale), a renewal keeps
-- it. One of the page's catalogue languages (checked before it is stored);
-- NULL: the customer's browser (Accept-Language) decides.
ALTER TABLE intents ADD COLUMN locale TEXT
    CHECK (locale IS NULL OR locale ~ '^[a-z]{2,3}$');

-- The payable's page (issue 35 item 3): a storefront may create a payable
-- alone (POST /v1/payables) and send its customer to the payable's page,
-- where the customer picks the method; the intent is created then, with
-- the page's locale and return_url. page_created_at is when the payable
-- was made for the page (NULL: a payable of POST /v1/intents only, which
-- has no page of its own).
ALTER TABLE payables
    ADD COLUMN page_created_at TIMESTAMPTZ,
    ADD COLUMN page_locale TEXT CHECK (page_locale IS NULL OR page_locale ~ '^[a-z]{2,3}$'),
    ADD COLUMN page_return_url TEXT
        CHECK (page_return_url IS NULL OR (length(page_return_url) BETWEEN 8 AND 2000 AND page_return_url ~ '^https?://'));

package intents_test

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/paywatch/paywatch/api/openapitest"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// A burst of concurrent creations many times larger than the pre-derived
// addresses kept free all succeed, each with its own address, and no
// creation derives an address itself: every handed-out address was
// inserted by a replenisher transaction, never by the transaction that
// created its intent (a trigger of the test's own database records which
// transaction inserted each address).
func TestBurstLargerThanThePoolWaitsForTheReplenisher(t *testing.T) {
	const gap, burst = 3, 40
	e := paywatchtest.New(t, paywatchtest.Only(payment.Tron), paywatchtest.WithConfig(func(c *config.Config) {
		c.Networks["tron"].Gap = gap
	}))
	free := count(t, e, `SELECT count(*) FROM free_addresses WHERE network = 'tron'`)
	if free >= burst {
		t.Fatalf("%d free addresses before the burst of %d: the burst must outrun them", free, burst)
	}
	if _, err := e.Store.Pool().Exec(t.Context(), `
		CREATE TABLE test_address_inserts (network TEXT, key BYTEA, xid BIGINT);
		CREATE FUNCTION test_record_address_insert() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO test_address_inserts VALUES (NEW.network, NEW.key, pg_current_xact_id()::text::bigint);
			RETURN NULL;
		END $$;
		CREATE TRIGGER test_record_address_insert AFTER INSERT ON addresses
			FOR EACH ROW EXECUTE FUNCTION test_record_address_insert();`); err != nil {
		t.Fatal(err)
	}
	key := e.Keys["storefront"]
	api := openapitest.Handler(t, e.API) // answers checked against the OpenAPI document
	var wg sync.WaitGroup
	codes := make([]int, burst)
	bodies := make([]string, burst)
	for i := range burst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"kind":"order","reference":"BURST-%d","amount_usd":"10.00","method":"TRX"}`, i)
			req := httptest.NewRequest("POST", "/v1/intents", bytes.NewBufferString(body))
			req.Header.Set("Authorization", "Bearer "+key)
			rec := httptest.NewRecorder()
			api.ServeHTTP(rec, req)
			codes[i], bodies[i] = rec.Code, rec.Body.String()
		}()
	}
	wg.Wait()
	for i := range burst {
		if codes[i] != 201 {
			t.Fatalf("creation %d of the burst: %d %s", i, codes[i], bodies[i])
		}
	}
	if n := count(t, e, `SELECT count(DISTINCT address) FROM intents WHERE network = 'tron'`); n != burst {
		t.Fatalf("%d distinct addresses for %d intents", n, burst)
	}
	if n := count(t, e, `SELECT count(*) FROM intents i JOIN test_address_inserts a ON a.network = i.network AND a.key = i.address_key
		WHERE a.xid = i.xmin::text::bigint`); n != 0 {
		t.Fatalf("%d of %d creations derived their own address on the request path", n, burst)
	}
	if n := count(t, e, `SELECT count(*) FROM intents i JOIN addresses a ON a.network = i.network AND a.key = i.address_key
		WHERE NOT EXISTS (SELECT 1 FROM free_addresses f WHERE f.network = a.network AND f.key = a.key)`); n != burst {
		t.Fatalf("%d of %d intents have a watched address that is no longer free", n, burst)
	}
	// The rounds vacuumed the queue of free addresses: its claimed entries
	// do not pile up in front of the next claims until autovacuum comes.
	if n := count(t, e, `SELECT coalesce(sum(vacuum_count), 0) FROM pg_stat_user_tables WHERE relname = 'free_addresses'`); n == 0 {
		t.Fatalf("%d claims, and the free-address queue was never vacuumed", burst)
	}
}

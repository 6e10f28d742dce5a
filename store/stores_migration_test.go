package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/api"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// lastBeforeStores is the last migration before stores (0034).
const lastBeforeStores = 33

// oldKey is the plaintext of an API key made before stores.
const oldKey = "pw_oldstorefrontkeyofonestoreinstall"

// fillBeforeStores applies the migrations up to lastBeforeStores by hand
// and fills every table a one-shop install writes with rows as paywatch
// writes them: three payables (an order paid by an intent, a top-up
// credited, an order paid by a debit) and an open one, their intents and
// derived addresses (taken and free), a Solana pool address in the pool's
// lane, transfers (two settling, one unexplained and resolved), the
// account and its ledger, events, API keys (one bound to an account
// prefix), an idempotency key, a webhook endpoint and its attempt, a
// period close, and the history rows the triggers keep.
func fillBeforeStores(t *testing.T, ctx context.Context, conn *pgx.Conn) {
	t.Helper()
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version > lastBeforeStores {
			break
		}
		if _, err := conn.Exec(ctx, m.SQL); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			t.Fatal(err)
		}
	}
	key := addresses.SandboxKeys[payment.Bitcoin]
	der, err := addresses.NewDeriver(payment.Bitcoin, key, "regtest")
	if err != nil {
		t.Fatal(err)
	}
	fp, err := addresses.Fingerprint(key)
	if err != nil {
		t.Fatal(err)
	}
	var addrs [5]addresses.Address
	for i := range addrs {
		if addrs[i], err = der.Derive(uint32(i)); err != nil {
			t.Fatal(err)
		}
	}
	sol, err := addresses.ParseSolanaPool(strings.NewReader(addresses.SandboxSolanaPool[19]))
	if err != nil {
		t.Fatal(err)
	}
	hash := store.HashAPIKey(oldKey)
	other1, other2 := sha256.Sum256([]byte("books")), sha256.Sum256([]byte("shop1"))
	reqHash := sha256.Sum256([]byte("POST /v1/intents {...}"))
	batch := []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO api_keys (id, name, hash, scopes, created_at, account_prefix) VALUES
			('key_01JD00000000000000000000K1', 'shop-front', $1, '{storefront}', '2026-11-01T10:00:00Z', NULL),
			('key_01JD00000000000000000000K2', 'books', $2, '{finance}', '2026-11-01T10:01:00Z', NULL),
			('key_01JD00000000000000000000K3', 'shop1-front', $3, '{read,intents}', '2026-11-01T10:02:00Z', 'shop1:')`, []any{hash, other1[:], other2[:]}},
		{`INSERT INTO idempotency_keys (api_key_id, key, request_hash, status, response, created_at) VALUES
			('key_01JD00000000000000000000K1', 'checkout-ORD-1', $1, 201, convert_to('{"id":"pi_01JD00000000000000000000P1"}', 'UTF8'), '2026-11-20T09:00:00Z')`, []any{reqHash[:]}},
		{`INSERT INTO addresses (network, key, address, source, derivation_index, created_at) VALUES
			('bitcoin', $1, $2, $11, 0, '2026-11-20T08:00:00Z'), ('bitcoin', $3, $4, $11, 1, '2026-11-20T08:00:00Z'),
			('bitcoin', $5, $6, $11, 2, '2026-11-20T08:00:00Z'), ('bitcoin', $7, $8, $11, 3, '2026-11-20T08:00:00Z'),
			('bitcoin', $9, $10, $11, 4, '2026-11-20T08:00:00Z')`,
			[]any{addrs[0].Key, addrs[0].String, addrs[1].Key, addrs[1].String, addrs[2].Key, addrs[2].String, addrs[3].Key, addrs[3].String, addrs[4].Key, addrs[4].String, fp}},
		{`INSERT INTO addresses (network, key, address, source, derivation_index, created_at) VALUES ('solana', $1, $2, 'pool', NULL, '2026-11-20T08:00:00Z')`,
			[]any{sol[0].Key, sol[0].String}},
		// Taken addresses leave the free queue, as a creation takes them.
		{`DELETE FROM free_addresses WHERE network = 'bitcoin' AND lane = $1 AND ord IN (0, 1, 2)`, []any{fp}},
		{`INSERT INTO derivation_counters (network, source, next_index) VALUES ('bitcoin', $1, 5)`, []any{fp}},
		{`INSERT INTO accounts (account, balance_cents, updated_at) VALUES ('cust-1', 6000, '2026-11-21T10:00:00Z')`, nil},
		{`INSERT INTO payables (id, kind, reference, account, amount_cents, created_at, page_created_at, page_locale, page_return_url) VALUES
			(1, 'order', 'ORD-1', 'cust-1', 5000, '2026-11-20T09:00:00Z', NULL, NULL, NULL),
			(2, 'topup', 'TOP-1', 'cust-1', 10000, '2026-11-20T09:05:00Z', '2026-11-20T09:05:00Z', 'de', 'https://shop.example.com/done'),
			(3, 'order', 'ORD-2', 'cust-1', 4000, '2026-11-21T10:00:00Z', NULL, NULL, NULL),
			(4, 'order', 'ORD-3', NULL, 2500, '2026-11-29T13:50:00Z', NULL, NULL, NULL)`, nil},
		{`SELECT setval('payables_id_seq', 4)`, nil},
		{`INSERT INTO intents (id, payable_id, method, network, asset, amount, tolerance, dust_min, address, address_key, rate, rate_sources, rate_at,
			expires_at, status, received, confirmed_sum, confirmations_required, detected_at, paid_at, created_at, updated_at, return_url, locale) VALUES
			('pi_01JD00000000000000000000P1', 1, 'BTC', 'bitcoin', 'native', 10000, 50, 546, $1, $2, 50000, '{static}', '2026-11-20T09:00:00Z',
			 '2026-11-20T09:30:00Z', 'awaiting_payment', 0, 0, 1, NULL, NULL, '2026-11-20T09:00:00Z', '2026-11-20T09:00:00Z', NULL, NULL),
			('pi_01JD00000000000000000000P2', 2, 'BTC', 'bitcoin', 'native', 20000, 100, 546, $3, $4, 50000, '{static}', '2026-11-20T09:05:00Z',
			 '2026-11-20T09:35:00Z', 'paid', 20000, 20000, 1, '2026-11-20T09:10:00Z', '2026-11-20T09:20:00Z', '2026-11-20T09:05:00Z', '2026-11-20T09:20:00Z',
			 'https://shop.example.com/done', 'de'),
			('pi_01JD00000000000000000000P3', 4, 'BTC', 'bitcoin', 'native', 5000, 25, 546, $5, $6, 50000, '{static}', '2026-11-29T13:50:00Z',
			 '2026-11-30T14:20:00Z', 'awaiting_payment', 0, 0, 1, NULL, NULL, '2026-11-29T13:50:00Z', '2026-11-29T13:50:00Z', NULL, NULL)`,
			[]any{addrs[0].String, addrs[0].Key, addrs[1].String, addrs[1].Key, addrs[2].String, addrs[2].Key}},
		// The status change writes intent_history by trigger.
		{`UPDATE intents SET status = 'paid', received = 10000, confirmed_sum = 10000, detected_at = '2026-11-20T09:08:00Z',
			paid_at = '2026-11-20T09:15:00Z', updated_at = '2026-11-20T09:15:00Z' WHERE id = 'pi_01JD00000000000000000000P1'`, nil},
		{`INSERT INTO transfers (id, network, txid, idx, asset, address, address_key, amount, intent_id, block_height, block_hash, first_seen_at, status,
			confirmations_required, confirmed_at, classification, credited, notified_class, created_at, updated_at, settled, resolved) VALUES
			('tr_01JD00000000000000000000T1', 'bitcoin', 'aa01', 0, 'native', $1, $2, 10000, 'pi_01JD00000000000000000000P1', 101, 'bb101', '2026-11-20T09:08:00Z', 'confirming',
			 1, NULL, 'settles', false, 'settles', '2026-11-20T09:08:00Z', '2026-11-20T09:08:00Z', 10000, 0),
			('tr_01JD00000000000000000000T2', 'bitcoin', 'aa02', 1, 'native', $3, $4, 20000, 'pi_01JD00000000000000000000P2', 102, 'bb102', '2026-11-20T09:10:00Z', 'confirmed',
			 1, '2026-11-20T09:20:00Z', 'settles', true, 'settles', '2026-11-20T09:10:00Z', '2026-11-20T09:20:00Z', 20000, 0),
			('tr_01JD00000000000000000000T3', 'bitcoin', 'aa03', 0, 'native', $5, $6, 700, NULL, 103, 'bb103', '2026-11-21T08:00:00Z', 'confirmed',
			 1, '2026-11-21T08:10:00Z', 'unknown_address', false, 'unknown_address', '2026-11-21T08:00:00Z', '2026-11-21T08:10:00Z', 0, 700)`,
			[]any{addrs[0].String, addrs[0].Key, addrs[1].String, addrs[1].Key, addrs[4].String, addrs[4].Key}},
		// The confirmation writes transfer_history by trigger.
		{`UPDATE transfers SET status = 'confirmed', confirmed_at = '2026-11-20T09:15:00Z', updated_at = '2026-11-20T09:15:00Z' WHERE id = 'tr_01JD00000000000000000000T1'`, nil},
		{`INSERT INTO resolutions (transfer_id, action, note, actor, created_at, covers) VALUES
			('tr_01JD00000000000000000000T3', 'ignore', 'address poisoning', 'key:books', '2026-11-21T09:00:00Z', 700)`, nil},
		{`INSERT INTO ledger_entries (id, account, type, amount_cents, reference, intent_id, transfer_id, balance_after_cents, created_at) VALUES
			('le_01JD00000000000000000000E1', 'cust-1', 'credit', 10000, 'TOP-1', 'pi_01JD00000000000000000000P2', 'tr_01JD00000000000000000000T2', 10000, '2026-11-20T09:20:00Z'),
			('le_01JD00000000000000000000E2', 'cust-1', 'debit', 4000, 'ORD-2', NULL, NULL, 6000, '2026-11-21T10:00:00Z')`, nil},
		{`UPDATE payables SET paid_by_intent = 'pi_01JD00000000000000000000P1', paid_at = '2026-11-20T09:15:00Z' WHERE id = 1`, nil},
		{`UPDATE payables SET paid_by_intent = 'pi_01JD00000000000000000000P2', paid_at = '2026-11-20T09:20:00Z' WHERE id = 2`, nil},
		{`UPDATE payables SET paid_by_entry = 'le_01JD00000000000000000000E2', paid_at = '2026-11-21T10:00:00Z' WHERE id = 3`, nil},
		{`INSERT INTO events (id, type, intent_id, transfer_id, account, data, created_at) VALUES
			('ev_01JD00000000000000000000V1', 'intent.detected', 'pi_01JD00000000000000000000P1', 'tr_01JD00000000000000000000T1', 'cust-1', '{"status":"detected"}', '2026-11-20T09:08:00Z'),
			('ev_01JD00000000000000000000V2', 'intent.paid', 'pi_01JD00000000000000000000P1', NULL, 'cust-1', '{"status":"paid"}', '2026-11-20T09:15:00Z'),
			('ev_01JD00000000000000000000V3', 'intent.paid', 'pi_01JD00000000000000000000P2', NULL, 'cust-1', '{"status":"paid"}', '2026-11-20T09:20:00Z'),
			('ev_01JD00000000000000000000V4', 'ledger.credited', 'pi_01JD00000000000000000000P2', 'tr_01JD00000000000000000000T2', 'cust-1', '{"amount_cents":10000}', '2026-11-20T09:20:00Z'),
			('ev_01JD00000000000000000000V5', 'transfer.unexplained', NULL, 'tr_01JD00000000000000000000T3', NULL, '{"classification":"unknown_address"}', '2026-11-21T08:00:00Z'),
			('ev_01JD00000000000000000000V6', 'ledger.debited', NULL, NULL, 'cust-1', '{"amount_cents":4000,"reference":"ORD-2"}', '2026-11-21T10:00:00Z')`, nil},
		{`INSERT INTO webhook_endpoints (name, url, last_seq, attempts, last_error, updated_at) VALUES
			('shop', 'https://shop.example.com/hook', 4, 1, 'HTTP 502', '2026-11-21T10:00:00Z')`, nil},
		{`INSERT INTO webhook_attempts (endpoint, event_seq, event_id, error, duration_ms, created_at, outcome) VALUES
			('shop', 5, 'ev_01JD00000000000000000000V5', 'HTTP 502', 40, '2026-11-21T10:00:01Z', 'retry')`, nil},
		{`INSERT INTO report_closes (id, period_from, period_to, as_of, closed_by, closed_at, report_json, report_csv) VALUES
			('rc_01JD00000000000000000000R1', '2026-11-01T00:00:00Z', '2026-11-16T00:00:00Z', '2026-11-17T00:00:00Z', 'cli:ops', '2026-11-17T00:05:00Z',
			 convert_to('{"totals":{}}', 'UTF8'), convert_to('transfer_id,amount', 'UTF8'))`, nil},
	}
	for i, b := range batch {
		if _, err := conn.Exec(ctx, b.sql, b.args...); err != nil {
			t.Fatalf("fill %d: %v\n%s", i, err, b.sql)
		}
	}
}

// snapshot is every row of every table but schema_migrations, as JSON
// without store_id, sorted, by table.
func snapshot(t *testing.T, ctx context.Context, conn *pgx.Conn) map[string][]string {
	t.Helper()
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name NOT IN ('schema_migrations', 'stores', 'store_keys') ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, table := range tables {
		// Without the columns the migrations add: store_id, and the
		// second source's on transfers (migration 0035).
		rows, err := conn.Query(ctx, fmt.Sprintf(`SELECT (to_jsonb(t) - 'store_id' - 'scanned_by' - 'verify_state' - 'verify_endpoint' - 'verify_detail'
			- 'verify_checked_at')::text AS r FROM %s t ORDER BY 1`, pgx.Identifier{table}.Sanitize()))
		if err != nil {
			t.Fatal(err)
		}
		list, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		out[table] = list
	}
	return out
}

// An installation from before stores migrates into the store "default"
// with nothing lost: every row of every table is there, equal; every row
// that has a store is the default's; API keys and webhook endpoints are
// every store's. Afterwards a creation, a credit and a debit work as
// before, the old API key works, and a second store's order of the same
// reference is its own.
func TestMigrationIntoStoresLosesNothing(t *testing.T) {
	ctx := context.Background()
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin), paywatchtest.BeforeMigrate(func(url string) {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		fillBeforeStores(t, ctx, conn)
		before := snapshot(t, ctx, conn)
		for _, table := range []string{"payables", "intents", "addresses", "free_addresses", "transfers", "resolutions", "accounts", "ledger_entries",
			"events", "api_keys", "idempotency_keys", "webhook_endpoints", "webhook_attempts", "report_closes", "intent_history", "transfer_history",
			"derivation_counters"} {
			if len(before[table]) == 0 {
				t.Fatalf("the populated database has no %s", table)
			}
		}
		st, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if n, err := st.Migrate(ctx); err != nil || n == 0 {
			t.Fatalf("migrate: %d %v", n, err)
		}
		after := snapshot(t, ctx, conn)
		if !reflect.DeepEqual(before, after) {
			for table := range before {
				if !reflect.DeepEqual(before[table], after[table]) {
					t.Errorf("%s changed:\nbefore %v\nafter  %v", table, before[table], after[table])
				}
			}
			t.FailNow()
		}
		for _, table := range []string{"payables", "intents", "addresses", "transfers", "accounts", "ledger_entries", "events", "report_closes"} {
			var stores []string
			if err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT array_agg(DISTINCT store_id) FROM %s`, table)).Scan(&stores); err != nil ||
				!reflect.DeepEqual(stores, []string{"default"}) {
				t.Fatalf("%s's stores after the migration: %v %v", table, stores, err)
			}
		}
		for _, table := range []string{"api_keys", "webhook_endpoints"} {
			var n int
			if err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s WHERE store_id IS NOT NULL`, table)).Scan(&n); err != nil || n != 0 {
				t.Fatalf("%s bound to a store after the migration: %d %v", table, n, err)
			}
		}
	}))

	// The old storefront key is every store's and works on the default
	// store as before.
	k, err := e.Store.APIKeyByPlain(ctx, oldKey)
	if err != nil || k.Store != "" || !k.Sees("shop-b") {
		t.Fatalf("the old key: %+v %v", k, err)
	}
	e.Keys["old"] = oldKey
	status, body := e.Do("GET", "/v1/intents/pi_01JD00000000000000000000P1", "old", nil)
	var v views.Intent
	if status != 200 || json.Unmarshal(body, &v) != nil || v.Status != payment.IntentPaid || len(v.Transfers) != 1 {
		t.Fatalf("an old intent: %d %s", status, body)
	}
	if b := e.Balance("cust-1"); b.AvailableUSD != "60.00" {
		t.Fatalf("the old balance: %+v", b)
	}
	// A creation, its credit, and a debit.
	top := e.CreateIntent("topup", "TOP-2", "cust-1", "100.00", "BTC")
	if top.Address == "" || top.Address == v.Address {
		t.Fatalf("a new intent's address: %+v", top)
	}
	e.Pay(top, payment.Native, paywatchtest.Units(top.AmountBaseUnits), "top-2")
	e.Chains[payment.Bitcoin].Mine(2)
	e.Sync(payment.Bitcoin)
	if got := e.Intent(top.ID); got.Status != payment.IntentPaid {
		t.Fatalf("the new top-up: %+v", got)
	}
	if b := e.Balance("cust-1"); b.AvailableUSD != "160.00" {
		t.Fatalf("the balance after the credit: %+v", b)
	}
	status, body = e.Do("POST", "/v1/accounts/cust-1/debits", "storefront", map[string]string{"reference": "ORD-4", "amount_usd": "30.00"})
	if status != 201 {
		t.Fatalf("a debit: %d %s", status, body)
	}
	if status, body = e.Do("POST", "/v1/accounts/cust-1/debits", "storefront", map[string]string{"reference": "ORD-2", "amount_usd": "40.00"}); status == 201 {
		t.Fatalf("the old debit's reference debited again: %s", body)
	}
	if b := e.Balance("cust-1"); b.AvailableUSD != "130.00" {
		t.Fatalf("the balance after the debit: %+v", b)
	}
	if types := e.CheckLedger("cust-1"); !reflect.DeepEqual(types, []string{"credit", "debit", "credit", "debit"}) {
		t.Fatalf("ledger: %v", types)
	}

	// A second store's ORD-1 is its own order, and the default's is untouched.
	e.AddShop("shop-b")
	e.AddShopKey("shop-b", payment.Bitcoin, "tpubDCM3fYoVu75K7pyQkiBKWjbkFAseES1vDrSxKRKFKQCUzWVVXi647rqXMuDMW8TM8rza6jM4NNKbfJ9fc4kVr1DQTPAF9uGBR553JbwEnwU")
	status, body = e.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-1", "amount_usd": "75.00", "method": "BTC"},
		api.StoreHeader, "shop-b")
	var b views.Intent
	if status != 201 || json.Unmarshal(body, &b) != nil || b.ID == "pi_01JD00000000000000000000P1" || b.Status != payment.IntentAwaiting {
		t.Fatalf("shop-b's ORD-1: %d %s", status, body)
	}
	if status, body = e.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-1", "amount_usd": "75.00", "method": "BTC"}); status == 201 {
		t.Fatalf("the default store's paid ORD-1 made a new intent: %s", body)
	}
	var n int
	if err := e.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM payables WHERE reference = 'ORD-1'`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("ORD-1 payables: %d %v", n, err)
	}
}

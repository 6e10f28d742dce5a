package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/api"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/rates"
	"github.com/paywatch/paywatch/views"
)

// accountKey is a regtest account-level extended public key (m/84'/1'/0')
// of a seed made of b.
func accountKey(t *testing.T, b byte) string {
	t.Helper()
	seed := make([]byte, 32)
	for i := range seed {
		seed[i] = b
	}
	k, err := hdkeychain.NewMaster(seed, &chaincfg.RegressionNetParams)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []uint32{84, 1, 0} {
		if k, err = k.Derive(hdkeychain.HardenedKeyStart + c); err != nil {
			t.Fatal(err)
		}
	}
	pub, err := k.Neuter()
	if err != nil {
		t.Fatal(err)
	}
	return pub.String()
}

// watchSet adds a service's new addresses to the Env's scanners.
type watchSet struct{ e *paywatchtest.Env }

func (w watchSet) Watch(n payment.Network, keys ...[]byte) {
	if s := w.e.Watch[n]; s != nil {
		s.Add(keys...)
	}
}

// storesEnv is an Env (Bitcoin only) with two stores, shop-a and shop-b,
// made through the stores API, each with its own extended key and keys
// named sf-a, fin-a, op-a, sf-b, fin-b in e.Keys. The API the Env serves
// is replaced by one over a Service that knows the stores' keys (as the
// daemon's does once it has read them).
func storesEnv(t *testing.T) *paywatchtest.Env {
	t.Helper()
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	xpub := map[string]string{}
	for i, shop := range []string{"shop-a", "shop-b"} {
		if st, body := e.Do("POST", "/v1/stores", "operator", map[string]any{"id": shop, "name": "Shop " + shop}); st != 201 {
			t.Fatalf("create %s: %d %s", shop, st, body)
		}
		xpub[shop] = accountKey(t, byte(i+1))
		st, body := e.Do("POST", "/v1/stores/"+shop+"/extended-keys", "operator", map[string]string{"network": "bitcoin", "account_key": xpub[shop]})
		if st != 201 || strings.Contains(string(body), xpub[shop]) {
			t.Fatalf("extended key of %s: %d %s", shop, st, body)
		}
		for _, k := range []struct {
			name   string
			scopes []string
		}{{"sf", []string{"storefront"}}, {"fin", []string{"finance"}}, {"op", []string{"operator"}}} {
			name := k.name + "-" + shop[len(shop)-1:]
			st, body := e.Do("POST", "/v1/stores/"+shop+"/api-keys", "operator", map[string]any{"name": name, "scopes": k.scopes})
			if st != 201 {
				t.Fatalf("api key %s: %d %s", name, st, body)
			}
			e.Keys[name] = decodeInto[api.StoreKeyView](t, body).Key
		}
	}
	setups := map[string]intents.StoreSetup{}
	for shop, key := range xpub {
		der, err := addresses.NewDeriver(payment.Bitcoin, key, "regtest")
		if err != nil {
			t.Fatal(err)
		}
		fp, err := addresses.Fingerprint(key)
		if err != nil {
			t.Fatal(err)
		}
		setups[shop] = intents.StoreSetup{Addresses: map[payment.Network]intents.AddressSource{
			payment.Bitcoin: {Deriver: der, Source: fp, Gap: 3, Store: shop}}}
	}
	der, err := addresses.NewDeriver(payment.Bitcoin, e.Config.Networks[payment.Bitcoin].AccountKey, "regtest")
	if err != nil {
		t.Fatal(err)
	}
	fp, _ := addresses.Fingerprint(e.Config.Networks[payment.Bitcoin].AccountKey)
	book := rates.NewBook(rates.BookConfig{MaxAge: 24 * 365 * time.Hour, MinSources: 1, Clock: e.Clock},
		[]rates.Provider{rates.NewStatic(paywatchtest.Prices)}, []string{"BTC"}, nil)
	book.Refresh(context.Background())
	svc := intents.New(intents.Options{Store: e.Store, Config: e.Config, Quotes: book, Chains: e.Nets, Watcher: watchSet{e}, Clock: e.Clock,
		Addresses: map[payment.Network]intents.AddressSource{payment.Bitcoin: {Deriver: der, Source: fp, Gap: 3}}, Stores: setups})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- svc.Run(ctx) }()
	srv := api.New(api.Options{Service: svc, Reader: e.Store, Finance: e.Finance, Reports: e.Reports, Config: e.Config, Status: e.Nets, Clock: e.Clock})
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("stores service: %v", err)
			}
		}
	})
	e.API = srv
	return e
}

// create creates an intent with key and fails unless it is 201.
func create(t *testing.T, e *paywatchtest.Env, key, kind, ref, account, usd string) views.Intent {
	t.Helper()
	body := map[string]string{"kind": kind, "reference": ref, "amount_usd": usd, "method": "BTC"}
	if account != "" {
		body["account"] = account
	}
	st, out := e.Do("POST", "/v1/intents", key, body)
	if st != 201 {
		t.Fatalf("%s creates %s %s: %d %s", key, kind, ref, st, out)
	}
	return decodeInto[views.Intent](t, out)
}

// sameAsUnknown asserts that answer (status, body) for a thing of another
// store is byte for byte the answer for one that does not exist (its id
// replaced by the other's).
func sameAsUnknown(t *testing.T, what string, st int, body []byte, ust int, ubody []byte, unknown, real string) {
	t.Helper()
	want := strings.ReplaceAll(string(ubody), unknown, real)
	if st != ust || string(body) != want {
		t.Errorf("%s: %d %s\nwant the unknown one's: %d %s", what, st, body, ust, want)
	}
}

// Two stores on one instance, with the same references and accounts: no
// route answers a store's key with anything of the other store (404 with
// the body of a thing that does not exist, no byte of its data), and each
// store's feed has its own events only (issue 34 items 1, 2, 5).
func TestStoresCannotSeeEachOther(t *testing.T) {
	e := storesEnv(t)
	btc := payment.Bitcoin
	// The same references and accounts in both stores, other amounts.
	a := map[string]views.Intent{}
	b := map[string]views.Intent{}
	for _, s := range []struct {
		key string
		m   map[string]views.Intent
		usd string
	}{{"sf-a", a, "12.34"}, {"sf-b", b, "56.78"}} {
		s.m["order"] = create(t, e, s.key, "order", "ORD-1", "cust-1", s.usd)
		s.m["topup"] = create(t, e, s.key, "topup", "TOP-1", "cust-1", "100.00")
	}
	onlyA := create(t, e, "sf-a", "order", "ORD-ONLY-A", "cust-only-a", "43.21")
	if a["order"].Address == b["order"].Address || a["order"].ID == b["order"].ID {
		t.Fatalf("the stores share an intent or address: %+v %+v", a["order"], b["order"])
	}
	// Both top-ups paid, A's order overpaid twice (transfers for A's
	// finance inbox), B's order overpaid once.
	e.Pay(a["topup"], payment.Native, paywatchtest.Units(a["topup"].AmountBaseUnits), "a-top")
	e.Pay(b["topup"], payment.Native, paywatchtest.Units(b["topup"].AmountBaseUnits), "b-top")
	e.Pay(a["order"], payment.Native, paywatchtest.Units("9999999"), "a-order-1")
	e.Pay(onlyA, payment.Native, paywatchtest.Units("8888888"), "a-only")
	e.Pay(b["order"], payment.Native, paywatchtest.Units("7777777"), "b-order-1")
	e.Chains[btc].Mine(1)
	e.Sync(btc)
	// Each debits the same reference from the same account.
	for _, key := range []string{"sf-a", "sf-b"} {
		if st, body := e.Do("POST", "/v1/accounts/cust-1/debits", key, map[string]string{"reference": "ORD-9", "amount_usd": "30.00"}); st != 201 {
			t.Fatalf("%s debit: %d %s", key, st, body)
		}
	}

	// Everything of A that B must never see.
	var secrets []string
	for _, v := range []views.Intent{a["order"], onlyA} {
		secrets = append(secrets, v.ID, v.Address, v.AmountBaseUnits, v.AmountUSD)
	}
	secrets = append(secrets, a["topup"].ID, a["topup"].Address) // its amount is B's too
	secrets = append(secrets, "cust-only-a", "ORD-ONLY-A", "shop-a", "9999999", "8888888", "43.21", "12.34")
	st, body := e.Do("GET", "/v1/transfers?status=all", "fin-a", nil)
	aTransfers := decodeInto[struct{ Transfers []views.Transfer }](t, body).Transfers
	if st != 200 || len(aTransfers) < 2 {
		t.Fatalf("A's inbox: %d %s", st, body)
	}
	for _, tr := range aTransfers {
		if tr.Address != a["order"].Address && tr.Address != onlyA.Address {
			t.Fatalf("A's inbox lists another store's transfer: %s", body)
		}
		secrets = append(secrets, tr.ID, tr.TxID)
	}
	st, body = e.Do("GET", "/v1/events?limit=1000", "sf-a", nil)
	aEvents := decodeInto[api.EventsPage](t, body).Events
	if st != 200 || len(aEvents) == 0 {
		t.Fatalf("A's events: %d %s", st, body)
	}
	for _, ev := range aEvents {
		secrets = append(secrets, ev.ID)
	}
	// What B was answered, by its request (what B sent is no news to it).
	bSaw := map[string][]byte{}
	doB := func(key, method, path string, body any, headers ...string) (int, []byte) {
		t.Helper()
		st, out := e.Do(method, path, key, body, headers...)
		raw, _ := json.Marshal(body)
		bSaw[method+" "+path+" "+string(raw)] = out
		return st, out
	}

	const unknownPI, unknownTR = "pi_01JD3K7W9ZC8X5Q2R4T6V8Y0AB", "tr_01JD3K9A2B3C4D5E6F7G8H9J0K"
	// Intents by id: get, QR, report, renew.
	for _, r := range []struct{ method, path string }{
		{"GET", "/v1/intents/%s"}, {"GET", "/v1/intents/%s/qr.png"}, {"POST", "/v1/intents/%s/report"}, {"POST", "/v1/intents/%s/renew"},
	} {
		ust, ubody := doB("sf-b", r.method, fmt.Sprintf(r.path, unknownPI), nil)
		st, body := doB("sf-b", r.method, fmt.Sprintf(r.path, onlyA.ID), nil)
		sameAsUnknown(t, r.method+" "+r.path, st, body, ust, ubody, unknownPI, onlyA.ID)
	}
	// Payables: the same reference is B's own; A's only reference is unknown.
	st, body = doB("sf-b", "GET", "/v1/payables/order/ORD-1", nil)
	if st != 200 || !strings.Contains(string(body), b["order"].ID) {
		t.Errorf("B's ORD-1: %d %s", st, body)
	}
	ust, ubody := doB("sf-b", "GET", "/v1/payables/order/ORD-NEVER", nil)
	st, body = doB("sf-b", "GET", "/v1/payables/order/ORD-ONLY-A", nil)
	sameAsUnknown(t, "payable", st, body, ust, ubody, "ORD-NEVER", "ORD-ONLY-A")
	// Accounts: A's account is as new to B as one never seen.
	for _, path := range []string{"/v1/accounts/%s/balance", "/v1/accounts/%s/ledger"} {
		ust, ubody := doB("sf-b", "GET", fmt.Sprintf(path, "cust-never"), nil)
		st, body := doB("sf-b", "GET", fmt.Sprintf(path, "cust-only-a"), nil)
		sameAsUnknown(t, path, st, body, ust, ubody, "cust-never", "cust-only-a")
	}
	// B's balance is B's: 100 paid, 30 debited.
	st, body = doB("sf-b", "GET", "/v1/accounts/cust-1/balance", nil)
	if st != 200 || !strings.Contains(string(body), `"70.00"`) {
		t.Errorf("B's balance: %d %s", st, body)
	}
	// A conflict is within the store: B's debit of a reference B used is
	// refused with B's amounts, and A's references are free for B.
	st, body = doB("sf-b", "POST", "/v1/accounts/cust-1/debits", map[string]string{"reference": "ORD-9", "amount_usd": "31.00"})
	if st != 409 {
		t.Errorf("B's second debit of ORD-9 at another amount: %d %s", st, body)
	}
	st, body = doB("sf-b", "POST", "/v1/intents", map[string]string{"kind": "order", "reference": "ORD-1", "account": "cust-1", "amount_usd": "99.00", "method": "BTC"})
	if st != 409 {
		t.Errorf("B's ORD-1 at another amount: %d %s", st, body)
	}
	// Transfers: get, resolve; the inbox lists B's only.
	ust, ubody = doB("fin-b", "GET", "/v1/transfers/"+unknownTR, nil)
	st, body = doB("fin-b", "GET", "/v1/transfers/"+aTransfers[0].ID, nil)
	sameAsUnknown(t, "transfer", st, body, ust, ubody, unknownTR, aTransfers[0].ID)
	for _, req := range []map[string]string{
		{"action": "ignore", "note": "spam"},
		{"action": "credit_account", "account": "cust-1", "note": "take it"},
	} {
		before := e.Counts()
		ust, ubody = doB("fin-b", "POST", "/v1/transfers/"+unknownTR+"/resolve", req)
		st, body = doB("fin-b", "POST", "/v1/transfers/"+aTransfers[0].ID+"/resolve", req)
		sameAsUnknown(t, "resolve "+req["action"], st, body, ust, ubody, unknownTR, aTransfers[0].ID)
		if after := e.Counts(); fmt.Sprint(before) != fmt.Sprint(after) {
			t.Errorf("B's resolution of A's transfer changed the database: %v → %v", before, after)
		}
	}
	st, body = doB("fin-b", "GET", "/v1/transfers?status=all", nil)
	bTransfers := decodeInto[struct{ Transfers []views.Transfer }](t, body).Transfers
	if st != 200 || len(bTransfers) != 1 || bTransfers[0].Address != b["order"].Address {
		t.Errorf("B's inbox: %d %s", st, body)
	}
	// A's cursor is as unknown to B's inbox as a made-up one.
	ust, ubody = doB("fin-b", "GET", "/v1/transfers?after="+unknownTR, nil)
	st, body = doB("fin-b", "GET", "/v1/transfers?after="+aTransfers[0].ID, nil)
	sameAsUnknown(t, "inbox cursor", st, body, ust, ubody, unknownTR, aTransfers[0].ID)
	// credit_intent of B's transfer to A's intent: A's intent is unknown.
	if len(bTransfers) == 1 {
		ust, ubody = doB("fin-b", "POST", "/v1/transfers/"+bTransfers[0].ID+"/resolve", map[string]string{"action": "credit_intent", "intent_id": unknownPI, "note": "n"})
		st, body = doB("fin-b", "POST", "/v1/transfers/"+bTransfers[0].ID+"/resolve", map[string]string{"action": "credit_intent", "intent_id": onlyA.ID, "note": "n"})
		sameAsUnknown(t, "credit_intent to A's intent", st, body, ust, ubody, unknownPI, onlyA.ID)
	}
	// The event feed: B's own only; A's event id is not a cursor for B.
	st, body = doB("sf-b", "GET", "/v1/events?limit=1000", nil)
	bPage := decodeInto[api.EventsPage](t, body)
	if st != 200 || len(bPage.Events) == 0 {
		t.Fatalf("B's events: %d %s", st, body)
	}
	ust, ubody = doB("sf-b", "GET", "/v1/events?after=ev_01JD3K7W9ZC8X5Q2R4T6V8Y0AB", nil)
	st, body = doB("sf-b", "GET", "/v1/events?after="+aEvents[0].ID, nil)
	sameAsUnknown(t, "event cursor", st, body, ust, ubody, "ev_01JD3K7W9ZC8X5Q2R4T6V8Y0AB", aEvents[0].ID)
	// A long-poll of B does not wake for A's events, and B's next never
	// names one of A's: A's new event is not B's page; B's next one is.
	next := bPage.Next
	create(t, e, "sf-a", "order", "ORD-LATER-A", "", "2.00")
	st, body = doB("sf-b", "GET", "/v1/events?wait=1s&after="+next, nil)
	if p := decodeInto[api.EventsPage](t, body); st != 200 || len(p.Events) != 0 || p.Next != next {
		t.Errorf("B's long-poll after A's event: %d %s", st, body)
	}
	create(t, e, "sf-a", "order", "ORD-LATER-A2", "", "2.00")
	laterB := create(t, e, "sf-b", "order", "ORD-LATER-B", "", "3.00")
	// A page of one is B's next event, not one of A's in between.
	st, body = doB("sf-b", "GET", "/v1/events?limit=1&after="+next, nil)
	if p := decodeInto[api.EventsPage](t, body); st != 200 || len(p.Events) != 1 || !strings.Contains(string(p.Events[0].Data), laterB.ID) {
		t.Errorf("B's page of one: %d %s", st, body)
	}
	st, body = doB("sf-b", "GET", "/v1/events?wait=30s&after="+next, nil)
	if p := decodeInto[api.EventsPage](t, body); st != 200 || len(p.Events) != 1 || !strings.Contains(string(p.Events[0].Data), laterB.ID) || p.Next != p.Events[0].ID {
		t.Errorf("B's long-poll after B's event: %d %s", st, body)
	}
	// A store's key naming another store is refused without a word of it.
	st, body = doB("sf-b", "GET", "/v1/accounts/cust-1/balance", nil, api.StoreHeader, "shop-a")
	if st != 403 {
		t.Errorf("B naming shop-a: %d %s", st, body)
	}
	// The instance's routes need an every-store key; a store's operator
	// key sees its store's webhook endpoints only (none here).
	for _, path := range []string{"/v1/status", "/v1/stores"} {
		if st, body := doB("op-b", "GET", path, nil); st != 403 || apiCode(body) != "forbidden" {
			t.Errorf("op-b %s: %d %s", path, st, body)
		}
	}
	if st, body := doB("op-b", "POST", "/v1/networks/bitcoin/rescan", map[string]int{"from_height": 1}); st != 403 {
		t.Errorf("op-b rescan: %d %s", st, body)
	}
	if st, body := doB("op-b", "GET", "/v1/webhooks", nil); st != 200 || string(body) != "{\"endpoints\":[]}\n" {
		t.Errorf("op-b webhooks: %d %s", st, body)
	}
	if st, body := doB("op-b", "GET", "/v1/webhooks/deliveries", nil); st != 200 || !strings.Contains(string(body), `"deliveries":[]`) {
		t.Errorf("op-b deliveries: %d %s", st, body)
	}
	doB("sf-b", "GET", "/v1/methods", nil)

	// Not a byte of A in anything B was answered.
	for req, body := range bSaw {
		for _, s := range secrets {
			if s != "" && !strings.Contains(req, s) && strings.Contains(string(body), s) {
				t.Errorf("%s answered B with A's %q: %s", req, s, body)
			}
		}
	}
	// A's references are free for B.
	st, body = e.Do("POST", "/v1/intents", "sf-b", map[string]string{"kind": "order", "reference": "ORD-ONLY-A", "amount_usd": "1.00", "method": "BTC"})
	if st != 201 {
		t.Errorf("B takes a reference A uses: %d %s", st, body)
	}

	// The operator's every-store key acts for the store it names.
	st, body = e.Do("GET", "/v1/payables/order/ORD-ONLY-A", "all", nil, api.StoreHeader, "shop-a")
	if st != 200 || !strings.Contains(string(body), onlyA.ID) {
		t.Errorf("operator in shop-a: %d %s", st, body)
	}
	st, body = e.Do("GET", "/v1/transfers?status=all", "all", nil, api.StoreHeader, "shop-b")
	if p := decodeInto[struct{ Transfers []views.Transfer }](t, body); st != 200 || len(p.Transfers) != 1 {
		t.Errorf("operator's inbox of shop-b: %d %s", st, body)
	}
	st, body = e.Do("GET", "/v1/transfers?status=all", "all", nil)
	if p := decodeInto[struct{ Transfers []views.Transfer }](t, body); st != 200 || len(p.Transfers) != len(aTransfers)+1 {
		t.Errorf("operator's inbox of every store: %d %s", st, body)
	}
}

// GET /v1/methods answers a store's key for its store: a network it has
// no extended key for is not available, and says so.
func TestMethodsOfAStoreWithoutKeys(t *testing.T) {
	e := storesEnv(t)
	if st, body := e.Do("POST", "/v1/stores", "operator", map[string]any{"id": "shop-c", "name": "C"}); st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	st, body := e.Do("POST", "/v1/stores/shop-c/api-keys", "operator", map[string]any{"name": "sf-c", "scopes": []string{"read"}})
	if st != 201 {
		t.Fatalf("key: %d %s", st, body)
	}
	e.Keys["sf-c"] = decodeInto[api.StoreKeyView](t, body).Key
	for key, want := range map[string]string{"sf-a": "", "sf-c": "this store has no extended public key for bitcoin"} {
		st, body := e.Do("GET", "/v1/methods", key, nil)
		var btc *api.MethodView
		for _, m := range decodeInto[[]api.MethodView](t, body) {
			if m.Method == "BTC" {
				btc = &m
			}
		}
		if st != 200 || btc == nil || btc.Available != (want == "") || btc.Reason != want {
			t.Errorf("%s: BTC is %+v (%d)", key, btc, st)
		}
	}
	// The operator's key asks for a store with the header.
	st, body = e.Do("GET", "/v1/methods", "all", nil, api.StoreHeader, "shop-c")
	if st != 200 || !strings.Contains(string(body), "this store has no extended public key for bitcoin") {
		t.Errorf("operator for shop-c: %d %s", st, body)
	}
	if st, body := e.Do("GET", "/v1/methods", "all", nil, api.StoreHeader, "shop-nope"); st != 404 || apiCode(body) != "not_found" {
		t.Errorf("operator for an unknown store: %d %s", st, body)
	}
}

// The stores API: creation is validated field by field and idempotent on
// the same body; extended keys are checked as the daemon checks
// networks.<n>.account_key and belong to one store; a rotated key stops
// working and the new one works; GET /v1/stores lists the networks.
func TestStoresAPI(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	body := map[string]any{"id": "shop-x", "name": "Shop X", "colour": "#1a2b3c", "languages": []string{"en", "de"},
		"return_hosts": []string{"shop-x.example"}, "settings": map[string]any{"confirmations": map[string]int{"BTC": 3}, "tolerance_bps": 50}}
	before := e.Counts()
	for _, c := range []struct {
		field string
		value any
		says  string
	}{
		{"id", "Shop X", "id must be"},
		{"name", "", "name is required"},
		{"colour", "red", "colour must be"},
		{"logo_url", "http://x.example/l.png", "logo_url must be"},
		{"languages", []string{"english!"}, "languages[0]"},
		{"return_hosts", []string{"https://x.example"}, "return_hosts[0]"},
		{"settings", map[string]any{"confirmations": map[string]int{"DOGE": 1}}, "settings.confirmations"},
		{"settings", map[string]any{"tolerance_bps": 20000}, "settings.tolerance_bps"},
	} {
		bad := map[string]any{}
		for k, v := range body {
			bad[k] = v
		}
		bad[c.field] = c.value
		st, out := e.Do("POST", "/v1/stores", "operator", bad)
		if st != 400 || !strings.Contains(string(out), c.says) {
			t.Errorf("bad %s: %d %s", c.field, st, out)
		}
	}
	if after := e.Counts(); fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("refused creations changed the database")
	}
	st, first := e.Do("POST", "/v1/stores", "operator", body)
	if st != 201 {
		t.Fatalf("create: %d %s", st, first)
	}
	if st, again := e.Do("POST", "/v1/stores", "operator", body); st != 200 || string(again) != string(first) {
		t.Errorf("same body again: %d %s, want 200 %s", st, again, first)
	}
	body["name"] = "Other"
	if st, out := e.Do("POST", "/v1/stores", "operator", body); st != 409 {
		t.Errorf("same id, other fields: %d %s", st, out)
	}
	if st, out := e.Do("POST", "/v1/stores", "storefront", body); st != 403 {
		t.Errorf("storefront key: %d %s", st, out)
	}

	// Extended keys.
	good := accountKey(t, 7)
	k, _ := hdkeychain.NewMaster(make([]byte, 32), &chaincfg.RegressionNetParams)
	for _, c := range []struct {
		name, network, key string
		status             int
		says               string
	}{
		{"private", "bitcoin", k.String(), 400, "PRIVATE"},
		{"master (depth 0)", "bitcoin", mustNeuter(t, k), 400, "depth 0"},
		{"garbage", "bitcoin", "zpub-nothing", 400, "account_key"},
		{"unknown network", "dogecoin", good, 400, "network must be one of"},
		{"disabled network", "litecoin", good, 400, "not enabled"},
		{"solana", "solana", good, 400, "Solana"},
		{"the instance's own", "bitcoin", e.Config.Networks[payment.Bitcoin].AccountKey, 409, "the instance's own"},
		{"unknown store", "bitcoin", good, 404, "no store"},
	} {
		path := "/v1/stores/shop-x/extended-keys"
		if c.status == 404 {
			path = "/v1/stores/shop-nope/extended-keys"
		}
		st, out := e.Do("POST", path, "operator", map[string]string{"network": c.network, "account_key": c.key})
		if st != c.status || !strings.Contains(string(out), c.says) || strings.Contains(string(out), c.key[4:]) {
			t.Errorf("%s: %d %s", c.name, st, out)
		}
	}
	st, out := e.Do("POST", "/v1/stores/shop-x/extended-keys", "operator", map[string]string{"network": "bitcoin", "account_key": good})
	if st != 201 || !strings.Contains(string(out), api.ExtendedKeyTakesEffect) {
		t.Fatalf("add: %d %s", st, out)
	}
	if st, out := e.Do("POST", "/v1/stores/shop-x/extended-keys", "operator", map[string]string{"network": "bitcoin", "account_key": good}); st != 200 {
		t.Errorf("same key again: %d %s", st, out)
	}
	if st, out := e.Do("POST", "/v1/stores/shop-x/extended-keys", "operator", map[string]string{"network": "bitcoin", "account_key": accountKey(t, 8)}); st != 409 {
		t.Errorf("a second key for the network: %d %s", st, out)
	}
	e.Do("POST", "/v1/stores", "operator", map[string]any{"id": "shop-y", "name": "Y"})
	if st, out := e.Do("POST", "/v1/stores/shop-y/extended-keys", "operator", map[string]string{"network": "bitcoin", "account_key": good}); st != 409 || !strings.Contains(string(out), "one key, one store") {
		t.Errorf("another store's key: %d %s", st, out)
	}

	// Listing.
	st, out = e.Do("GET", "/v1/stores", "operator", nil)
	var list struct{ Stores []api.StoreView }
	if err := json.Unmarshal(out, &list); st != 200 || err != nil || len(list.Stores) != 3 || list.Stores[0].ID != "default" {
		t.Fatalf("list: %d %s", st, out)
	}
	for _, s := range list.Stores {
		want := s.ID != "shop-y"
		if len(s.Networks) != 1 || s.Networks[0].Network != "bitcoin" || s.Networks[0].Key != want || !s.Networks[0].Healthy {
			t.Errorf("store %s networks: %+v", s.ID, s.Networks)
		}
	}
	if strings.Contains(string(out), good) || strings.Contains(string(out), e.Config.Networks[payment.Bitcoin].AccountKey) {
		t.Errorf("the list shows an extended key: %s", out)
	}

	// Keys: created once, rotated, the old one refused.
	st, out = e.Do("POST", "/v1/stores/shop-x/api-keys", "operator", map[string]any{"name": "x-sf", "scopes": []string{"storefront"}, "account_prefix": "x-"})
	if st != 201 {
		t.Fatalf("key: %d %s", st, out)
	}
	old := decodeInto[api.StoreKeyView](t, out)
	if old.Store != "shop-x" || old.AccountPrefix != "x-" || !strings.HasPrefix(old.Key, "pw_") {
		t.Errorf("key: %s", out)
	}
	if st, out := e.Do("POST", "/v1/stores/shop-x/api-keys", "operator", map[string]any{"name": "x-sf", "scopes": []string{"storefront"}}); st != 409 {
		t.Errorf("same name again: %d %s", st, out)
	}
	if st, out := e.Do("POST", "/v1/stores/shop-x/api-keys", "operator", map[string]any{"name": "x-2", "scopes": []string{"admin"}}); st != 400 || !strings.Contains(string(out), "scopes[0]") {
		t.Errorf("unknown scope: %d %s", st, out)
	}
	e.Keys["old"] = old.Key
	if st, out := e.Do("GET", "/v1/accounts/x-1/balance", "old", nil); st != 200 {
		t.Fatalf("old key before rotation: %d %s", st, out)
	}
	st, out = e.Do("POST", "/v1/stores/shop-x/api-keys/x-sf/rotate", "operator", nil)
	if st != 201 {
		t.Fatalf("rotate: %d %s", st, out)
	}
	rotated := decodeInto[api.StoreKeyView](t, out)
	if rotated.Key == old.Key || rotated.Name != "x-sf" || rotated.AccountPrefix != "x-" {
		t.Errorf("rotated: %s", out)
	}
	e.Keys["new"] = rotated.Key
	if st, out := e.Do("GET", "/v1/accounts/x-1/balance", "new", nil); st != 200 {
		t.Errorf("new key: %d %s", st, out)
	}
	// This instance refuses the old key at once (it was cached).
	if st, out := e.Do("GET", "/v1/accounts/x-1/balance", "old", nil); st != 401 {
		t.Errorf("old key after rotation: %d %s", st, out)
	}
	if st, out := e.Do("POST", "/v1/stores/shop-y/api-keys/x-sf/rotate", "operator", nil); st != 404 {
		t.Errorf("rotating another store's key: %d %s", st, out)
	}
}

func mustNeuter(t *testing.T, k *hdkeychain.ExtendedKey) string {
	t.Helper()
	p, err := k.Neuter()
	if err != nil {
		t.Fatal(err)
	}
	return p.String()
}

// A store's operator key sees the webhook endpoints that hear its store,
// and their deliveries, only; the every-store key sees them all.
func TestWebhooksOfAStore(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	ctx := context.Background()
	for _, shop := range []string{"shop-a", "shop-b"} {
		if st, body := e.Do("POST", "/v1/stores", "operator", map[string]any{"id": shop, "name": shop}); st != 201 {
			t.Fatalf("create %s: %d %s", shop, st, body)
		}
	}
	st, body := e.Do("POST", "/v1/stores/shop-a/api-keys", "operator", map[string]any{"name": "op-a", "scopes": []string{"operator"}})
	if st != 201 {
		t.Fatalf("key: %d %s", st, body)
	}
	e.Keys["op-a"] = decodeInto[api.StoreKeyView](t, body).Key
	for _, ep := range []struct{ name, shop string }{{"hook-a", "shop-a"}, {"hook-b", "shop-b"}, {"hook-all", ""}} {
		if _, err := e.Store.Pool().Exec(ctx, `INSERT INTO webhook_endpoints (name, url, last_seq, updated_at, store_id) VALUES ($1, $2, 0, now(), NULLIF($3, ''))`,
			ep.name, "https://"+ep.name+".example/hook", ep.shop); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Store.Pool().Exec(ctx, `INSERT INTO webhook_attempts (endpoint, event_seq, event_id, duration_ms, created_at) VALUES ($1, 1, 'ev_x', 5, now())`, ep.name); err != nil {
			t.Fatal(err)
		}
	}
	st, body = e.Do("GET", "/v1/webhooks", "op-a", nil)
	if st != 200 || !strings.Contains(string(body), "hook-a") || strings.Contains(string(body), "hook-b") || strings.Contains(string(body), "hook-all") {
		t.Errorf("op-a's endpoints: %d %s", st, body)
	}
	for _, q := range []string{"", "?endpoint=hook-b"} {
		st, body = e.Do("GET", "/v1/webhooks/deliveries"+q, "op-a", nil)
		if st != 200 || strings.Contains(string(body), "hook-b") || strings.Contains(string(body), "hook-all") || (q == "") != strings.Contains(string(body), "hook-a") {
			t.Errorf("op-a's deliveries%s: %d %s", q, st, body)
		}
	}
	st, body = e.Do("GET", "/v1/webhooks", "operator", nil)
	if st != 200 || strings.Count(string(body), `"name"`) != 3 {
		t.Errorf("every endpoint: %d %s", st, body)
	}
}

// TestAStoreNamedBeforeItExistsIsFoundOnceCreated: the API remembers the
// stores a request named that exist (a store is never deleted), never one
// it did not find: a store unknown to a first request is found by the
// first request after its creation.
func TestAStoreNamedBeforeItExistsIsFoundOnceCreated(t *testing.T) {
	e := storesEnv(t)
	if st, body := e.Do("GET", "/v1/methods", "all", nil, api.StoreHeader, "shop-late"); st != 404 || apiCode(body) != "not_found" {
		t.Fatalf("before it exists: %d %s", st, body)
	}
	if st, body := e.Do("POST", "/v1/stores", "operator", map[string]any{"id": "shop-late", "name": "Late"}); st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	for range 2 {
		if st, body := e.Do("GET", "/v1/methods", "all", nil, api.StoreHeader, "shop-late"); st != 200 {
			t.Fatalf("once created: %d %s", st, body)
		}
	}
}

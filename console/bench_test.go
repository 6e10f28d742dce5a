package console_test

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/console"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/views"
)

// BenchmarkPages10k measures the server time of console pages with 10,000
// unresolved transfers in the inbox (scanned by the real pipeline from a
// scripted chain): the first inbox page, a page deep in the cursor, a
// filtered page, a transfer page and the reconciliation of all of them.
//
//	go test -run '^$' -bench Pages10k -benchtime 20x ./console/
func BenchmarkPages10k(b *testing.B) {
	n := 10000
	if testing.Short() {
		n = 300
	}
	s := newSite(b)
	ctx := context.Background()
	// 100 intents that the small payments never cover: each stays partial.
	var ins []views.Intent
	var keys [][]byte
	for k := 0; k < 100; k++ {
		in := s.CreateIntent("order", fmt.Sprint("ORD-BENCH-", k), "", "10000.00", "BTC")
		a, err := addresses.ParseAddress(payment.Bitcoin, "regtest", in.Address)
		if err != nil {
			b.Fatal(err)
		}
		ins, keys = append(ins, in), append(keys, a.Key)
	}
	in := ins[0]
	// Top up the look-ahead the intents used, for the unknown-address payments.
	if err := s.Service.EnsureLookahead(ctx); err != nil {
		b.Fatal(err)
	}
	var addr string
	var key []byte
	if err := s.Store.Pool().QueryRow(ctx, `SELECT address, key FROM addresses
		WHERE network = 'bitcoin' AND key IN (SELECT key FROM free_addresses WHERE network = 'bitcoin') ORDER BY derivation_index DESC LIMIT 1`).Scan(&addr, &key); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			s.Chains[payment.Bitcoin].Send(chainstest.TxID(fmt.Sprint("bench-", i)), 0, payment.Native, key, addr, big.NewInt(int64(1000+i)))
		} else {
			// Small payments to a real intent: partial, with a USD value.
			k := i / 2 % len(ins)
			s.Chains[payment.Bitcoin].Send(chainstest.TxID(fmt.Sprint("bench-p-", i)), 0, payment.Native, keys[k], ins[k].Address, big.NewInt(int64(600+i%100)))
		}
		if i%1000 == 999 {
			s.Chains[payment.Bitcoin].Mine(1)
		}
	}
	s.Chains[payment.Bitcoin].Mine(1)
	s.Sync(payment.Bitcoin)
	// Past the deadline the intent is underpaid and its payments partial.
	s.Clock.Advance(31 * time.Minute)
	if _, err := s.Service.Sweep(ctx); err != nil {
		b.Fatal(err)
	}
	if got := s.apiInbox(b, "limit=1000"); len(got.Transfers) != min(n, 1000) {
		b.Fatalf("inbox page has %d transfers", len(got.Transfers))
	}
	var total int64
	if err := s.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM transfers WHERE classification <> 'settles'`).Scan(&total); err != nil || total < int64(n) {
		var by string
		_ = s.Store.Pool().QueryRow(ctx, `SELECT string_agg(c, ' ') FROM (SELECT classification || ':' || status || ':' || count(*) c FROM transfers GROUP BY 1) x`).Scan(&by)
		b.Fatalf("%d inbox transfers (%v), want %d: %s", total, err, n, by)
	}
	c := s.client(b)
	c.signIn(b, s.Keys["finance"])
	u, _ := url.Parse(s.URL + "/console/")
	var cookie *http.Cookie
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == console.SessionCookie {
			cookie = ck
		}
	}
	// A transfer about 9,000 deep, for the cursor page.
	var deep, one string
	if err := s.Store.Pool().QueryRow(ctx, `SELECT id FROM transfers WHERE classification <> 'settles'
		ORDER BY created_at DESC, id DESC OFFSET $1 LIMIT 1`, n*9/10).Scan(&deep); err != nil {
		b.Fatal(err)
	}
	if err := s.Store.Pool().QueryRow(ctx, `SELECT id FROM transfers WHERE classification = 'partial' LIMIT 1`).Scan(&one); err != nil {
		b.Fatal(err)
	}
	pages := []struct{ name, path string }{
		{"inbox", "/console/inbox"},
		{"inbox-deep", "/console/inbox?after=" + deep},
		{"inbox-filtered", "/console/inbox?network=bitcoin&classification=partial&age=24h"},
		{"transfer", "/console/transfers/" + one},
		{"intent-50-transfers", "/console/intents/" + in.ID},
		{"reconciliation", "/console/reconciliation?from=2026-11-01&to=2026-12-01"},
	}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest("GET", p.path, nil)
				req.AddCookie(cookie)
				rec := httptest.NewRecorder()
				s.Console.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("%s: %d %s", p.path, rec.Code, rec.Body.String())
				}
			}
		})
	}
}

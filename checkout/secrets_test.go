package checkout_test

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/checkout"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// failingIntents fails reads of chosen intents with an error whose text
// must never reach a customer.
type failingIntents struct {
	checkout.Intents
	mu   *sync.Mutex
	fail map[string]bool
}

var errInternal = errors.New("read intent: dial tcp 10.9.8.7:5432: connection refused (SQLSTATE 08006) user=paywatch_admin")

func (f failingIntents) Get(ctx context.Context, id string) (views.Intent, error) {
	f.mu.Lock()
	fail := f.fail[id]
	f.mu.Unlock()
	if fail {
		return views.Intent{}, errInternal
	}
	return f.Intents.Get(ctx, id)
}

// shown is what a customer can see of one page: the page in both
// languages and its live endpoint's first message in both.
type shown struct {
	name  string
	phase string
	texts []string
}

// capture reads everything a customer sees of an intent's page now.
func (s *site) capture(t *testing.T, name, phase string, v views.Intent) shown {
	t.Helper()
	path := s.pageOf(t, v)
	out := shown{name: name, phase: phase}
	for _, lang := range []string{"en-US", "de-DE"} {
		resp, body := s.get(t, path, "Accept-Language", lang)
		if resp.StatusCode != 200 {
			t.Fatalf("%s page: %d", name, resp.StatusCode)
		}
		if !strings.Contains(body, `data-state="`+phase+`"`) {
			t.Fatalf("%s: the page is not in state %s:\n%s", name, phase, body)
		}
		out.texts = append(out.texts, body)
		st := s.openStream(t, path+"/live", "Accept-Language", lang)
		m := st.next(t, 10*time.Second)
		st.resp.Body.Close()
		if m.State != phase {
			t.Fatalf("%s: live state %s, want %s", name, m.State, phase)
		}
		out.texts = append(out.texts, m.Title+"\n"+m.HTML+"\n"+m.Pay)
	}
	return out
}

// The page never shows a secret, in any state, language or live message:
// not the account, an API key or its prefix, a key's name, the node's URL
// or any part of it, an intent, transfer or event id, a txid, nor an
// internal error's text.
func TestPageShowsNoSecretInAnyState(t *testing.T) {
	var mu sync.Mutex
	fail := map[string]bool{}
	s := newSite(t, siteOptions{
		checkout: func(c *config.Checkout) {
			c.ContactURL = "mailto:help@shop.example.com"
			c.LinkLifetime = config.Duration{Duration: 24 * time.Hour}
		},
		wrap: func(in checkout.Intents) checkout.Intents { return failingIntents{Intents: in, mu: &mu, fail: fail} },
		env:  []paywatchtest.Option{paywatchtest.Only(payment.Bitcoin, payment.Ethereum)},
	})
	btc, eth := payment.Bitcoin, payment.Ethereum
	full := func(v views.Intent) *big.Int { return paywatchtest.Units(v.AmountBaseUnits) }
	var seen []shown
	var all []views.Intent

	wait := s.create(t, "ORD-S-WAIT", "10.00", nil)
	under := s.create(t, "ORD-S-UNDER", "10.00", nil)
	pend := s.create(t, "ORD-S-PEND", "10.00", nil)
	conf := s.create(t, "ORD-S-CONF", "10.00", nil)
	paid := s.create(t, "ORD-S-PAID", "10.00", map[string]string{"return_url": "https://shop.example.com/thanks?o=ORD-S-PAID"})
	over := s.create(t, "ORD-S-OVER", "10.00", nil)
	dup := s.create(t, "ORD-S-DUP", "10.00", nil)
	rep := s.create(t, "ORD-S-REP", "10.00", nil)
	exp := s.create(t, "ORD-S-EXP", "10.00", nil)
	late := s.create(t, "ORD-S-LATE", "10.00", nil)
	renew := s.create(t, "ORD-S-RENEW", "10.00", nil)
	status, raw := s.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-S-WRONG",
		"amount_usd": "10.00", "method": "ETH", "account": "cust-secret-account-77"})
	if status != 201 {
		t.Fatalf("ETH intent: %d %s", status, raw)
	}
	wrong := s.Intent(strings.Split(strings.Split(string(raw), `"id":"`)[1], `"`)[0])

	// Each Pay mines a block: the paid ones first, then a duplicate, the
	// half payment, and the one left at 1 of 2 confirmations.
	s.Pay(paid, payment.Native, full(paid), "s-paid")
	s.Pay(over, payment.Native, new(big.Int).Mul(full(over), big.NewInt(2)), "s-over")
	s.Pay(dup, payment.Native, full(dup), "s-dup")
	s.Chains[btc].Mine(1)
	s.Sync(btc)
	s.Pay(dup, payment.Native, full(dup), "s-dup-2")
	s.Pay(under, payment.Native, half(under), "s-under")
	s.Pay(conf, payment.Native, full(conf), "s-conf")
	s.broadcast(t, pend, payment.Native, full(pend), "s-pend")
	s.Sync(btc)
	s.Pay(wrong, payment.USDT, big.NewInt(25_000_000), "s-wrong")
	s.Sync(eth)
	if status, body := s.Do("POST", "/v1/intents/"+rep.ID+"/report", "storefront", nil); status != 200 {
		t.Fatalf("report: %d %s", status, body)
	}
	for _, c := range []struct {
		name, phase string
		v           views.Intent
	}{
		{"waiting", "waiting", wait}, {"underpaid", "underpaid", under}, {"in the mempool", "confirming", pend},
		{"1 of 2", "confirming", s.Intent(conf.ID)}, {"paid with a return button", "paid", paid},
		{"overpaid", "paid", over}, {"paid with a duplicate", "paid", dup}, {"reported", "waiting", rep},
		{"wrong asset", "review", wrong},
	} {
		seen = append(seen, s.capture(t, c.name, c.phase, c.v))
	}
	if !strings.Contains(seen[4].texts[0], `href="https://shop.example.com/thanks?o=ORD-S-PAID"`) {
		t.Fatal("the paid page has no return button")
	}

	// Past the deadline: expired, short (underpaid), late, renewed.
	s.Clock.Advance(31 * time.Minute)
	if _, err := s.Service.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Pay(late, payment.Native, full(late), "s-late")
	s.Sync(btc)
	status, raw = s.Do("POST", "/v1/intents/"+renew.ID+"/renew", "storefront", nil)
	if status != 201 {
		t.Fatalf("renew: %d %s", status, raw)
	}
	for _, c := range []struct {
		name, phase string
		v           views.Intent
	}{
		{"expired", "expired", exp}, {"short at the deadline", "review", under}, {"paid late", "review", late},
		{"renewed", "renewed", renew},
	} {
		seen = append(seen, s.capture(t, c.name, c.phase, c.v))
	}

	// Reverted: paid, then the paying block leaves the chain for good.
	s.Sync(btc)
	rev := s.create(t, "ORD-S-REV", "10.00", nil)
	s.Pay(rev, payment.Native, full(rev), "s-rev")
	s.Chains[btc].Mine(1)
	s.Sync(btc)
	if st := s.Intent(rev.ID).Status; st != payment.IntentPaid {
		t.Fatalf("before the reorg: %s", st)
	}
	s.Chains[btc].Reorg(2, 1, false)
	s.Sync(btc)
	seen = append(seen, s.capture(t, "reverted", "reverted", rev))

	// An internal failure: a generic page and no stream.
	mu.Lock()
	fail[wait.ID] = true
	mu.Unlock()
	path := s.pageOf(t, wait)
	resp, body := s.get(t, path)
	resp2, body2 := s.get(t, path+"/live")
	if resp.StatusCode != 500 || resp2.StatusCode != 500 || !strings.Contains(body, "Something went wrong on our side") {
		t.Fatalf("failing read: %d %d\n%s", resp.StatusCode, resp2.StatusCode, body)
	}
	_, notFound := s.get(t, "/pay/"+strings.Repeat("C", 43))
	seen = append(seen, shown{name: "internal error", texts: []string{body, body2}}, shown{name: "not found", texts: []string{notFound}})

	// What must never show.
	all = append(all, wait, under, pend, conf, paid, over, dup, rep, exp, late, renew, wrong, rev)
	secrets := []string{"cust-secret-account-77", "rpcuser", "rpcsecret", "node-7.internal", "wallet/w", nodeURL,
		"10.9.8.7", "SQLSTATE", "paywatch_admin", "connection refused", "storefront-key", "finance-key", "operator-key", "all-key",
		"pw_", testSecret}
	for _, k := range s.Keys {
		secrets = append(secrets, k, k[:10])
	}
	for _, v := range all {
		secrets = append(secrets, v.ID, strings.TrimPrefix(v.ID, "pi_"))
		// A transfer's txid is public on its chain and the customer's own:
		// a paid page's receipt shows the paying ones (issue 35 item 4).
		// Its internal id never shows.
		for _, tr := range s.Intent(v.ID).Transfers {
			secrets = append(secrets, tr.ID)
		}
	}
	_, evs := s.Do("GET", "/v1/events?limit=1000", "storefront", nil)
	for _, part := range strings.Split(string(evs), `"id":"ev_`)[1:] {
		secrets = append(secrets, "ev_"+part[:26])
	}
	for _, sh := range seen {
		for i, text := range sh.texts {
			for _, secret := range secrets {
				if strings.Contains(text, secret) {
					t.Errorf("%s (text %d) shows %q", sh.name, i, secret)
				}
			}
			// Every page says what to do in words, never "lost" about money
			// that arrived.
			if sh.phase == "review" && !strings.Contains(text, "not lost") && !strings.Contains(text, "nicht verloren") {
				t.Errorf("%s (text %d) does not say the money is not lost", sh.name, i)
			}
		}
	}
	if len(seen) != 16 {
		t.Fatalf("%d captures", len(seen))
	}
	// The checks can fail: the API does show these, and the page shows the
	// reference.
	if a := s.Intent(wait.ID).Account; a == nil || *a != "cust-secret-account-77" {
		t.Fatalf("account %v", a)
	}
	if !strings.Contains(seen[0].texts[0], "ORD-S-WAIT") || !strings.Contains(seen[0].texts[0], wait.Address) {
		t.Fatal("the waiting page lacks its reference or address")
	}
}

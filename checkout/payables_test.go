package checkout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// postForm posts a form to a path of the site without following the
// redirect, and returns the status, the Location and the body.
func (s *site) postForm(t testing.TB, path string, form url.Values) (int, string, string) {
	t.Helper()
	resp, err := noRedirects().PostForm(s.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

// createPayable creates a payable for the page through the API.
func (s *site) createPayable(t testing.TB, body map[string]string) (int, views.PagePayable, string) {
	t.Helper()
	status, raw := s.Do("POST", "/v1/payables", "storefront", body)
	var p views.PagePayable
	if status < 300 {
		mustJSON(t, raw, &p)
	}
	return status, p, string(raw)
}

// A storefront creates a payable and sends its customer to one URL: the
// enabled methods are listed with their networks in words, no address is
// taken until the customer picks; the pick makes the intent (with the
// payable's locale and return URL) and the payable's URL leads to it from
// then on; picking another method replaces the open intent (the old one
// superseded, linking to the new, never two open); once a payment was seen
// the choice is no longer changed, and the payment is never dropped
// (issue 35 item 3).
func TestPayablePageChooseAndChange(t *testing.T) {
	s := newSite(t, siteOptions{env: []paywatchtest.Option{paywatchtest.Only(payment.Bitcoin, payment.Ethereum)}})
	before := s.Counts()
	req := map[string]string{"kind": "order", "reference": "ORD-PP-1", "amount_usd": "1250.00", "account": "cust-secret-account-77",
		"locale": "fr", "return_url": "https://shop.example.com/orders/ORD-PP-1"}
	status, pp, raw := s.createPayable(t, req)
	if status != 201 || !strings.HasPrefix(pp.PaymentPageURL, s.URL+"/pay/p/") || pp.Locale != "fr" || pp.Status != "unpaid" || pp.AmountUSD != "1250.00" {
		t.Fatalf("create: %d %s", status, raw)
	}
	if after := s.Counts(); after["intents"] != before["intents"] || after["payables"] != before["payables"]+1 {
		t.Fatalf("creating a payable made intents: %v -> %v", before, after)
	}
	status, again, _ := s.createPayable(t, req)
	if status != 200 || again.PaymentPageURL != pp.PaymentPageURL {
		t.Fatalf("again: %d %q", status, again.PaymentPageURL)
	}
	for field, bad := range map[string]string{"amount_usd": "1251.00", "locale": "es", "return_url": "https://evil.example.com/", "kind": "gift"} {
		b := map[string]string{}
		for k, v := range req {
			b[k] = v
		}
		b[field] = bad
		if status, _, raw := s.createPayable(t, b); status != 409 && (status != 400 || !strings.Contains(raw, field)) {
			t.Errorf("%s %q: %d %s", field, bad, status, raw)
		}
	}
	path := strings.TrimPrefix(pp.PaymentPageURL, s.URL)

	// The choice, in the payable's language, every enabled method with its
	// network; no address anywhere.
	resp, page := s.get(t, path, "Accept-Language", "de")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Language") != "fr" {
		t.Fatalf("payable page: %d %q", resp.StatusCode, resp.Header.Get("Content-Language"))
	}
	for _, want := range []string{"Choisissez votre moyen de paiement", "1\u202f250,00 USD", `value="BTC"`, `value="ETH"`,
		"USDT sur Ethereum (ERC-20)", "Réseau Ethereum (ERC-20)", "Réseau Bitcoin",
		"Ether (ETH) sur Ethereum</span> <span class=\"network\">Réseau Ethereum</span>", `action="` + path + `/choose?lang=fr"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the choice lacks %q", want)
		}
	}
	if strings.Contains(page, "cust-secret-account-77") || strings.Contains(page, "bcrt1") || strings.Contains(page, "0x") {
		t.Fatal("the choice shows an account or an address")
	}

	// The pick: the intent, then its page.
	status, loc, _ := s.postForm(t, path+"/choose?lang=fr", url.Values{"method": {"BTC"}})
	if status != 303 || !strings.HasPrefix(loc, "/pay/") || !strings.HasSuffix(loc, "?lang=fr") {
		t.Fatalf("choose BTC: %d %q", status, loc)
	}
	var p struct{ Intents []views.Intent }
	_, raw2 := s.Do("GET", "/v1/payables/order/ORD-PP-1", "storefront", nil)
	mustJSON(t, raw2, &p)
	if len(p.Intents) != 1 || p.Intents[0].Method != "BTC" || p.Intents[0].Locale != "fr" || p.Intents[0].ReturnURL != req["return_url"] {
		t.Fatalf("after the pick: %s", raw2)
	}
	btc := p.Intents[0]
	if loc != s.pageOf(t, btc)+"?lang=fr" {
		t.Fatalf("redirect %q, want the intent's page", loc)
	}
	// Picking it again, or opening the payable's URL, leads to it.
	if status, loc2, _ := s.postForm(t, path+"/choose", url.Values{"method": {"BTC"}}); status != 303 || !strings.HasPrefix(loc2, s.pageOf(t, btc)) {
		t.Fatalf("choose BTC again: %d %q", status, loc2)
	}
	if resp, _ := noRedirects().Get(s.URL + path); resp.StatusCode != 303 || resp.Header.Get("Location") != s.pageOf(t, btc)+"?lang=fr" {
		t.Fatalf("the payable's URL with an open intent: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	_, ipage := s.get(t, s.pageOf(t, btc))
	change := path + "?change=1&amp;lang=fr"
	if !strings.Contains(ipage, `id="change"><a href="`+change+`"`) {
		t.Fatalf("the intent's page has no change link to %s", change)
	}

	// Change to ETH: the BTC intent is replaced, never two open.
	if _, cpage := s.get(t, path+"?change=1"); !strings.Contains(cpage, `value="BTC" id="method-BTC" aria-current="true"`) {
		t.Fatal("the change page does not mark the current method")
	}
	status, loc, _ = s.postForm(t, path+"/choose?lang=fr", url.Values{"method": {"ETH"}})
	if status != 303 {
		t.Fatalf("change to ETH: %d", status)
	}
	_, raw2 = s.Do("GET", "/v1/payables/order/ORD-PP-1", "storefront", nil)
	p.Intents = nil
	mustJSON(t, raw2, &p)
	if len(p.Intents) != 2 {
		t.Fatalf("after the change: %s", raw2)
	}
	old, eth := p.Intents[0], p.Intents[1]
	if old.Status != payment.IntentSuperseded || old.SupersededBy == nil || *old.SupersededBy != eth.ID || eth.Method != "ETH" ||
		eth.RenewedFrom == nil || *eth.RenewedFrom != old.ID || eth.Locale != "fr" || eth.ReturnURL != req["return_url"] {
		t.Fatalf("the change: old %s %v, new %s %s", old.Status, old.SupersededBy, eth.Method, eth.Status)
	}
	if loc != s.pageOf(t, eth)+"?lang=fr" {
		t.Fatalf("redirect %q", loc)
	}
	if _, opage := s.get(t, s.pageOf(t, old)); !strings.Contains(opage, s.pageOf(t, eth)) {
		t.Fatal("the old page does not link to the new one")
	}

	// A payment seen on ETH: the choice is no longer changed, nothing is
	// dropped.
	s.Pay(eth, payment.Native, half(eth), "pp-part")
	s.Sync(payment.Ethereum)
	n := s.Counts()["intents"]
	status, _, body := s.postForm(t, path+"/choose?lang=fr", url.Values{"method": {"BTC"}})
	if status != 409 || !strings.Contains(body, "Un paiement est déjà arrivé") {
		t.Fatalf("change after a payment: %d", status)
	}
	if got := s.Intent(eth.ID); got.Status != payment.IntentDetected || got.SupersededBy != nil || s.Counts()["intents"] != n {
		t.Fatalf("after the refused change: %s, %d intents", got.Status, s.Counts()["intents"])
	}
	if _, epage := s.get(t, s.pageOf(t, eth)); strings.Contains(epage, `id="change"`) {
		t.Fatal("a change link once a payment was seen")
	}

	// Not a method of the page; a forged token.
	if status, _, _ := s.postForm(t, path+"/choose", url.Values{"method": {"DOGE"}}); status != 400 {
		t.Fatalf("method DOGE: %d", status)
	}
	if status, _, _ := s.postForm(t, path+"/choose", url.Values{"method": {"LTC"}}); status != 400 {
		t.Fatalf("method LTC (disabled): %d", status)
	}
	if resp, _ := s.get(t, "/pay/p/"+strings.Repeat("A", 43)); resp.StatusCode != 404 {
		t.Fatalf("forged payable token: %d", resp.StatusCode)
	}
	if resp, _ := s.get(t, "/pay/p/"+strings.TrimPrefix(s.pageOf(t, eth), "/pay/")); resp.StatusCode != 404 {
		t.Fatalf("an intent's token as a payable's: %d", resp.StatusCode)
	}
	// A payable of POST /v1/intents has no page.
	plain := s.create(t, "ORD-PP-PLAIN", "10.00", nil)
	if _, ipage := s.get(t, s.pageOf(t, plain)); strings.Contains(ipage, `id="change"`) {
		t.Fatal("a change link on an intent without a payable page")
	}
	var e struct{ Error struct{ Code string } }
	_, rawp := s.Do("POST", "/v1/payables", "storefront", map[string]string{"kind": "order", "reference": "ORD-PP-PLAIN", "amount_usd": "11.00", "account": "cust-secret-account-77"})
	_ = json.Unmarshal([]byte(rawp), &e)
	if e.Error.Code != "conflict" {
		t.Fatalf("another amount for an existing payable: %s", rawp)
	}
}

// Tabs choosing at the same instant on one payable's page: 8 first choices
// of random enabled methods at once, through the page's handler and the
// real store, end with exactly one open intent, every other superseded
// (each by a later one, so the last choice wins), no address taken twice,
// and every answer an intent of the payable. 8 choices of one method (a
// double click) answer one intent and take one address (issue 35 item 3).
func TestPayablePageConcurrentFirstChoices(t *testing.T) {
	s := newSite(t, siteOptions{env: []paywatchtest.Option{paywatchtest.Only(payment.Bitcoin, payment.Ethereum)}})
	const tabs = 8
	for round := range 4 {
		ref := fmt.Sprintf("ORD-PP-RACE-%d", round)
		status, pp, raw := s.createPayable(t, map[string]string{"kind": "order", "reference": ref, "amount_usd": "40.00", "account": "cust-race"})
		if status != 201 {
			t.Fatalf("create %s: %d %s", ref, status, raw)
		}
		path := strings.TrimPrefix(pp.PaymentPageURL, s.URL)
		_, page := s.get(t, path)
		var methods []string
		for _, m := range regexp.MustCompile(`value="([A-Z0-9-]+)" id="method-`).FindAllStringSubmatch(page, -1) {
			methods = append(methods, m[1])
		}
		if len(methods) < 2 {
			t.Fatalf("the choice lists %v", methods)
		}
		same := round == 3
		picks := make([]string, tabs)
		for i := range picks {
			picks[i] = methods[rand.IntN(len(methods))]
			if same {
				picks[i] = methods[0]
			}
		}
		if !same && picks[0] == picks[1] {
			picks[1] = methods[(slices.Index(methods, picks[0])+1)%len(methods)]
		}

		type answer struct {
			status int
			loc    string
			err    error
		}
		answers := make([]answer, tabs)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range tabs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				resp, err := noRedirects().PostForm(s.URL+path+"/choose", url.Values{"method": {picks[i]}})
				if err != nil {
					answers[i].err = err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				answers[i] = answer{status: resp.StatusCode, loc: resp.Header.Get("Location")}
			}()
		}
		close(start)
		wg.Wait()

		var p struct{ Intents []views.Intent }
		_, raw2 := s.Do("GET", "/v1/payables/order/"+ref, "storefront", nil)
		mustJSON(t, raw2, &p)
		byPage := map[string]views.Intent{}
		var open []views.Intent
		addresses := map[string]string{}
		for _, in := range p.Intents {
			byPage[s.pageOf(t, in)] = in
			if prev, ok := addresses[in.Address]; ok {
				t.Errorf("%s: address %s taken by %s and %s", ref, in.Address, prev, in.ID)
			}
			addresses[in.Address] = in.ID
			switch in.Status {
			case payment.IntentAwaiting:
				open = append(open, in)
			case payment.IntentSuperseded:
				if in.SupersededBy == nil {
					t.Errorf("%s: %s superseded by nothing", ref, in.ID)
				}
			default:
				t.Errorf("%s: intent %s (%s) is %s", ref, in.ID, in.Method, in.Status)
			}
		}
		if len(open) != 1 {
			t.Fatalf("%s: picks %v left %d open intents, want 1: %s", ref, picks, len(open), raw2)
		}
		// Superseded ones form one line of choices ending at the open one.
		for id, n := open[0].ID, 1; ; n++ {
			var from *views.Intent
			for i := range p.Intents {
				if in := &p.Intents[i]; in.SupersededBy != nil && *in.SupersededBy == id {
					if from != nil {
						t.Fatalf("%s: %s and %s both superseded by %s", ref, from.ID, in.ID, id)
					}
					from = in
				}
			}
			if from == nil {
				if n != len(p.Intents) {
					t.Fatalf("%s: %d of %d intents lead to the open one: %s", ref, n, len(p.Intents), raw2)
				}
				break
			}
			id = from.ID
		}
		for i, a := range answers {
			pagePath, _, _ := strings.Cut(a.loc, "?")
			in, ok := byPage[pagePath]
			if a.err != nil || a.status != 303 || !ok || in.Method != picks[i] {
				t.Errorf("%s: tab %d chose %s: %d %q %v (no intent of the payable of that method)", ref, i, picks[i], a.status, a.loc, a.err)
			}
		}
		if same && len(p.Intents) != 1 {
			t.Errorf("%s: %d choices of %s made %d intents, want 1", ref, tabs, methods[0], len(p.Intents))
		}
		if resp, _ := noRedirects().Get(s.URL + path); resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), s.pageOf(t, open[0])) {
			t.Fatalf("%s: the payable's URL leads to %q, want the open intent", ref, resp.Header.Get("Location"))
		}
	}
	var dup int
	if err := s.Store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM (SELECT address FROM intents GROUP BY network, address HAVING count(*) > 1) d`).Scan(&dup); err != nil {
		t.Fatal(err)
	}
	if dup != 0 {
		t.Fatalf("%d addresses taken twice", dup)
	}
}

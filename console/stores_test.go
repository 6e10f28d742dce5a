package console_test

import (
	"context"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// twoStores is the scenario's inbox in the default store (plus a paid
// top-up of account cust-a), and in store shop-b an order with the same
// reference as the default store's underpaid one (ORD-UNDER), paid by
// half, and a paid top-up of account cust-b; a webhook endpoint each and
// one for every store.
type twoStores struct {
	*site
	A cases
	// ATop is the default store's paid top-up (account cust-a).
	ATop views.Intent
	// BUnder and BTop are shop-b's.
	BUnder, BTop views.Intent
	// ATransfers and BTransfers are each store's transfer ids.
	ATransfers, BTransfers []string
	// BKey is a key of shop-b with every scope (the clerk's).
	BKey string
}

func newTwoStores(t *testing.T) *twoStores {
	t.Helper()
	s := &twoStores{site: newSite(t)}
	ctx := context.Background()
	btc := payment.Bitcoin
	s.AddShop("shop-b")
	s.BKey = s.ShopKey("shop-b", "clerk-b", "finance", "storefront", "operator")
	s.BUnder = s.CreateIntent("order", "ORD-UNDER", "cust-u", "100.00", "BTC")
	s.BTop = s.CreateIntent("topup", "TOPUP-B", "cust-b", "100.00", "BTC")
	s.IntoShop("shop-b", s.BUnder, s.BTop)
	s.ATop = s.CreateIntent("topup", "TOPUP-A", "cust-a", "100.00", "BTC")
	s.Pay(s.BUnder, payment.Native, new(big.Int).Div(paywatchtest.Units(s.BUnder.AmountBaseUnits), big.NewInt(2)), "b-under")
	s.Pay(s.BTop, payment.Native, paywatchtest.Units(s.BTop.AmountBaseUnits), "b-top")
	s.Pay(s.ATop, payment.Native, paywatchtest.Units(s.ATop.AmountBaseUnits), "a-top")
	s.Chains[btc].Mine(2)
	s.Sync(btc)
	s.A = s.scenario(t)
	for shop, ids := range map[string]*[]string{"default": &s.ATransfers, "shop-b": &s.BTransfers} {
		ts, err := s.Store.InboxTransfers(ctx, store.InboxFilter{Status: "all", Limit: 100, Store: shop})
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range ts {
			*ids = append(*ids, tr.ID)
		}
	}
	if len(s.ATransfers) != 4 || len(s.BTransfers) != 1 {
		t.Fatalf("inbox transfers: %d of the default store, %d of shop-b; want 4 and 1", len(s.ATransfers), len(s.BTransfers))
	}
	for name, shop := range map[string]string{"a-hook": "default", "b-hook": "shop-b", "all-hook": ""} {
		if err := s.Store.EnsureWebhookEndpoint(ctx, name, "https://"+name+".example/", shop, false, s.Clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// sameAs checks that a refusal of another store's thing (named other) is
// the very page of an unknown one (named unknown): the same status and
// the same words.
func sameAs(t *testing.T, what string, r1 *http.Response, b1, other string, r2 *http.Response, b2, unknown string) {
	t.Helper()
	if r1.StatusCode != http.StatusNotFound || r2.StatusCode != http.StatusNotFound {
		t.Errorf("%s: %d for another store's, %d for an unknown one; want 404 both", what, r1.StatusCode, r2.StatusCode)
	}
	if a, b := strings.ReplaceAll(b1, other, "{X}"), strings.ReplaceAll(b2, unknown, "{X}"); a != b {
		t.Errorf("%s: another store's answer differs from an unknown one's:\n%s\n---\n%s", what, a, b)
	}
}

// A clerk of store shop-b sees and touches shop-b alone: every console
// route tried with the default store's intents, transfers, payables,
// accounts and webhook endpoints answers as for things that do not exist,
// and the lists, counts, reports, CSV and live counts are shop-b's (issue
// 34 item 2).
func TestStoreClerkSeesOnlyItsStore(t *testing.T) {
	s := newTwoStores(t)
	c := s.client(t)
	csrf := c.signIn(t, s.BKey)
	under := s.byDefaultClass(t, "partial")

	// Lists: the inbox (a store= of another store changes nothing).
	for _, path := range []string{"/console/inbox?status=all", "/console/inbox?status=all&store=default"} {
		_, page := c.get(t, path)
		if !strings.Contains(page, s.BTransfers[0]) {
			t.Errorf("%s lacks shop-b's transfer", path)
		}
		for _, id := range s.ATransfers {
			if strings.Contains(page, id) {
				t.Errorf("%s shows the default store's transfer %s", path, id)
			}
		}
		if !strings.Contains(page, "store shop-b") {
			t.Errorf("%s does not say which store is signed in", path)
		}
	}

	// A transfer of the default store: its page, and resolving it.
	r1, b1 := c.get(t, "/console/transfers/"+under)
	r2, b2 := c.get(t, "/console/transfers/tr_doesnotexist0000000000")
	sameAs(t, "transfer page", r1, b1, under, r2, b2, "tr_doesnotexist0000000000")
	form := url.Values{"csrf": {csrf}, "action": {"ignore"}, "note": {"not ours"}}
	r1, b1 = c.post(t, "/console/transfers/"+under+"/resolve", form)
	r2, b2 = c.post(t, "/console/transfers/tr_doesnotexist0000000000/resolve", form)
	sameAs(t, "resolve", r1, b1, under, r2, b2, "tr_doesnotexist0000000000")
	if tr := s.transfer(t, under); tr.Resolution != nil {
		t.Fatalf("shop-b's clerk resolved the default store's transfer: %+v", tr.Resolution)
	}
	// Crediting shop-b's transfer to the default store's intent: not found.
	_, page := c.get(t, "/console/transfers/"+s.BTransfers[0])
	if !strings.Contains(page, "in store shop-b") {
		t.Errorf("shop-b's transfer page does not name its store in the decision form")
	}
	credit := func(intent string) (*http.Response, string) {
		r, b := c.post(t, "/console/transfers/"+s.BTransfers[0]+"/resolve", url.Values{"csrf": {csrf}, "action": {"credit_intent"},
			"intent_id": {intent}, "note": {"move it"}})
		m := errorMessage.FindStringSubmatch(b)
		if m == nil {
			t.Fatalf("credit_intent %s: %d without an error message", intent, r.StatusCode)
		}
		return r, m[1]
	}
	r1, b1 = credit(s.A.Under.ID)
	r2, b2 = credit("in_doesnotexist0000000000")
	sameAs(t, "credit another store's intent", r1, b1, s.A.Under.ID, r2, b2, "in_doesnotexist0000000000")

	// An intent, its QR code, a payable.
	r1, b1 = c.get(t, "/console/intents/"+s.A.Under.ID)
	r2, b2 = c.get(t, "/console/intents/in_doesnotexist0000000000")
	sameAs(t, "intent page", r1, b1, s.A.Under.ID, r2, b2, "in_doesnotexist0000000000")
	r1, b1 = c.get(t, "/console/intents/"+s.A.Under.ID+"/qr.png")
	r2, b2 = c.get(t, "/console/intents/in_doesnotexist0000000000/qr.png")
	sameAs(t, "intent QR", r1, b1, s.A.Under.ID, r2, b2, "in_doesnotexist0000000000")
	r1, b1 = c.get(t, "/console/payables/order/ORD-DUP")
	r2, b2 = c.get(t, "/console/payables/order/ORD-NOPE")
	sameAs(t, "payable page", r1, b1, "ORD-DUP", r2, b2, "ORD-NOPE")
	if _, page := c.get(t, "/console/payables/order/ORD-UNDER"); !strings.Contains(page, s.BUnder.ID) || strings.Contains(page, s.A.Under.ID) {
		t.Errorf("ORD-UNDER for shop-b's clerk is not shop-b's order")
	}
	if _, page := c.get(t, "/console/intents/"+s.BUnder.ID); !strings.Contains(page, "ORD-UNDER") {
		t.Errorf("shop-b's own intent does not open")
	}

	// Search: the default store's ids, references, txids and accounts are
	// nothing; shop-b's reference opens shop-b's payable.
	for _, q := range []string{s.A.Under.ID, s.A.Dup.Reference, s.A.Dup.Address, under, "cust-a", "TOPUP-A"} {
		resp, page := c.get(t, "/console/search?q="+url.QueryEscape(q))
		if resp.StatusCode != 200 || !strings.Contains(page, "Nothing is named") {
			t.Errorf("search %s: %d, want nothing found", q, resp.StatusCode)
		}
	}
	if resp, _ := c.get(t, "/console/search?q=ORD-UNDER"); resp.StatusCode != http.StatusSeeOther ||
		resp.Header.Get("Location") != "/console/payables/order/ORD-UNDER" {
		t.Errorf("search ORD-UNDER: %d %s, want shop-b's payable", resp.StatusCode, resp.Header.Get("Location"))
	}

	// Balances: shop-b's accounts; the default store's account is an
	// unknown one's zero balance.
	_, page = c.get(t, "/console/balances")
	if !strings.Contains(page, "cust-b") || strings.Contains(page, "cust-a") || strings.Contains(page, "cust-17") {
		t.Errorf("shop-b's balances list other accounts than its own")
	}
	r1, b1 = c.get(t, "/console/balances?account=cust-a")
	r2, b2 = c.get(t, "/console/balances?account=cust-zz")
	if r1.StatusCode != 200 || strings.ReplaceAll(b1, "cust-a", "{X}") != strings.ReplaceAll(b2, "cust-zz", "{X}") {
		t.Errorf("the default store's account differs from an unknown one for shop-b's clerk")
	}
	if _, page := c.get(t, "/console/balances?account=cust-b"); !strings.Contains(page, "100.00 USD") {
		t.Errorf("shop-b's account cust-b does not show its credited top-up")
	}

	// Reconciliation and its CSV: shop-b's rows alone.
	for _, path := range []string{"/console/reconciliation?from=2026-11-01", "/console/reconciliation/download?from=2026-11-01&format=csv"} {
		_, page := c.get(t, path)
		if !strings.Contains(page, s.BTransfers[0]) {
			t.Errorf("%s lacks shop-b's transfer", path)
		}
		for _, id := range s.ATransfers {
			if strings.Contains(page, id) {
				t.Errorf("%s shows the default store's transfer %s", path, id)
			}
		}
	}

	// Webhooks: shop-b's endpoint only; another's redelivery is unknown.
	_, page = c.get(t, "/console/webhooks")
	if !strings.Contains(page, "b-hook") || strings.Contains(page, "a-hook") || strings.Contains(page, "all-hook") {
		t.Errorf("shop-b's webhooks page shows other endpoints than its own")
	}
	r1, b1 = c.post(t, "/console/webhooks/a-hook/redeliver", url.Values{"csrf": {csrf}, "from_seq": {"1"}})
	r2, b2 = c.post(t, "/console/webhooks/no-hook/redeliver", url.Values{"csrf": {csrf}, "from_seq": {"1"}})
	sameAs(t, "redeliver", r1, b1, "a-hook", r2, b2, "no-hook")
	if r, _ := c.post(t, "/console/webhooks/b-hook/redeliver", url.Values{"csrf": {csrf}, "from_seq": {"1"}}); r.StatusCode != http.StatusSeeOther {
		t.Errorf("redeliver shop-b's own endpoint: %d", r.StatusCode)
	}

	// The instance's pages are an every-store key's.
	if r, _ := c.get(t, "/console/networks"); r.StatusCode != http.StatusForbidden {
		t.Errorf("networks for a store's key: %d, want 403", r.StatusCode)
	}
	if r, _ := c.post(t, "/console/networks/bitcoin/reconcile", url.Values{"csrf": {csrf}}); r.StatusCode != http.StatusForbidden {
		t.Errorf("reconcile for a store's key: %d, want 403", r.StatusCode)
	}

	// Live: shop-b's unresolved count and shop-b's last event.
	_, live := c.get(t, "/console/live?seq=-1")
	lastB, err := s.Store.LastStoreEventSeq(context.Background(), "shop-b")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"seq":` + itoa(lastB) + `,"inbox_unresolved":1}`; strings.TrimSpace(live) != want {
		t.Errorf("live: %s, want %s", live, want)
	}
}

// An every-store key on an instance of two stores sees both, each row
// with its store, narrows a list to one store, and decides on a store's
// transfer in that store (issue 34 item 2).
func TestEveryStoreKeySeesEveryStoreWithItsName(t *testing.T) {
	s := newTwoStores(t)
	c := s.client(t)
	csrf := c.signIn(t, s.Keys["all"])
	_, page := c.get(t, "/console/inbox?status=all")
	for _, id := range append(append([]string{}, s.ATransfers...), s.BTransfers...) {
		if !strings.Contains(page, id) {
			t.Errorf("the every-store inbox lacks %s", id)
		}
	}
	if !strings.Contains(page, `<td data-label="Store" class="store">shop-b</td>`) || !strings.Contains(page, "every store") {
		t.Errorf("the every-store inbox names no store")
	}
	_, page = c.get(t, "/console/inbox?status=all&store=shop-b")
	if !strings.Contains(page, s.BTransfers[0]) || strings.Contains(page, s.ATransfers[0]) {
		t.Errorf("the inbox narrowed to shop-b shows another store's transfers")
	}
	if _, page := c.get(t, "/console/payables/order/ORD-UNDER?store=shop-b"); !strings.Contains(page, s.BUnder.ID) {
		t.Errorf("shop-b's ORD-UNDER does not open with store=shop-b")
	}
	if _, page := c.get(t, "/console/payables/order/ORD-UNDER"); !strings.Contains(page, s.A.Under.ID) {
		t.Errorf("ORD-UNDER without a store is not the default store's")
	}
	if _, page := c.get(t, "/console/balances?account=cust-b&store=shop-b"); !strings.Contains(page, "100.00 USD") {
		t.Errorf("shop-b's cust-b does not open with store=shop-b")
	}
	if _, page := c.get(t, "/console/reconciliation/download?from=2026-11-01&format=csv&store=shop-b"); !strings.Contains(page, s.BTransfers[0]) ||
		strings.Contains(page, s.ATransfers[0]) {
		t.Errorf("shop-b's CSV for the every-store key is not shop-b's")
	}
	// Deciding on shop-b's transfer: in shop-b.
	_, page = c.get(t, "/console/transfers/"+s.BTransfers[0])
	if !strings.Contains(page, "in store shop-b") {
		t.Errorf("the decision form does not name the transfer's store")
	}
	if r, b := c.post(t, "/console/transfers/"+s.BTransfers[0]+"/resolve", url.Values{"csrf": {csrf}, "action": {"ignore"}, "note": {"test"}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("resolve shop-b's transfer with the every-store key: %d %s", r.StatusCode, b)
	}
	if r, _ := c.get(t, "/console/networks"); r.StatusCode != 200 {
		t.Errorf("networks for the every-store key: %d", r.StatusCode)
	}
	bad := regexp.MustCompile(`store must be a store id`)
	if r, b := c.get(t, "/console/inbox?store=Not+A+Store"); r.StatusCode != 400 || !bad.MatchString(b) {
		t.Errorf("a malformed store filter: %d", r.StatusCode)
	}
}

// byDefaultClass is the default store's single transfer of a
// classification.
func (s *twoStores) byDefaultClass(t *testing.T, class string) string {
	t.Helper()
	ts, err := s.Store.InboxTransfers(context.Background(), store.InboxFilter{Status: "unresolved", Classification: class, Limit: 10, Store: "default"})
	if err != nil || len(ts) != 1 {
		t.Fatalf("the default store's %s transfers: %v %d", class, err, len(ts))
	}
	return ts[0].ID
}

var errorMessage = regexp.MustCompile(`id="error-message"[^>]*>([^<]*)<`)

func itoa(n int64) string { return big.NewInt(n).String() }

// A clerk of shop-b in a real browser: the header names the store, the
// inbox lists shop-b's transfers alone, the menu has no Networks, the
// decision form names the store, and the default store's transfer, intent
// and payable by URL are "not found" as unknown ones (issue 34 item 2).
func TestChromiumStoreClerkSeesItsStore(t *testing.T) {
	s := newTwoStores(t)
	ctx := browser(t, 1280)
	dir := shotDir(t)
	signInBrowser(t, ctx, s.URL, s.BKey)
	if got := text(t, ctx, "#signed-store"); got != "store shop-b" {
		t.Fatalf("the header says %q, want store shop-b", got)
	}
	if st := open(t, ctx, s.URL+"/console/inbox"); st != 200 {
		t.Fatalf("inbox: %d", st)
	}
	if got := inboxIDs(t, ctx); strings.Join(got, ",") != s.BTransfers[0] {
		t.Fatalf("shop-b's inbox lists %v, want only %s", got, s.BTransfers[0])
	}
	if got := text(t, ctx, "#inbox-total"); got != "1" {
		t.Errorf("shop-b's inbox count is %s, want 1", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('.top nav a[href="/console/networks"], #store-filter, th.store').length`); n != 0 {
		t.Errorf("a store's clerk is offered Networks or a store filter (%d)", n)
	}
	shoot(t, ctx, dir, "store-clerk-inbox")
	if st := open(t, ctx, s.URL+"/console/transfers/"+s.BTransfers[0]); st != 200 {
		t.Fatalf("shop-b's transfer: %d", st)
	}
	if got := text(t, ctx, "#transfer-store"); got != "shop-b" {
		t.Errorf("the transfer page names store %q", got)
	}
	other := s.byDefaultClass(t, "dust")
	for path, want := range map[string]string{
		"/console/transfers/" + other:                  "no transfer " + other,
		"/console/intents/" + s.A.Dup.ID:               `no intent "` + s.A.Dup.ID + `"`,
		"/console/payables/order/" + s.A.Dup.Reference: "no order " + s.A.Dup.Reference,
	} {
		if st := open(t, ctx, s.URL+path); st != 404 {
			t.Errorf("%s: %d, want 404", path, st)
			continue
		}
		if got := text(t, ctx, "#error-message"); got != want {
			t.Errorf("%s says %q, want %q", path, got, want)
		}
	}
	// The live count is shop-b's (the default store has four unresolved).
	open(t, ctx, s.URL+"/console/inbox")
	waitFor(t, ctx, `document.querySelector('[data-live="inbox"]') && document.querySelector('[data-live="inbox"]').textContent === "1"`)
}

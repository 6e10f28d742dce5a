package console_test

import (
	"context"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
	"github.com/paywatch/paywatch/webhooks"
)

// The finance clerk's rough edges found by trying the console (issue 36
// item 9): an overpaid transfer's page opens on crediting an account with
// its surplus (shown, in the asset and in USD), not on crediting the intent
// it already pays (the one action finance refuses); the balances page
// lists the accounts, with a search, before any id is typed; and on a
// phone (390 px) the inbox never scrolls sideways.
func TestChromiumClerkOverpaymentBalancesAndPhoneInbox(t *testing.T) {
	s := newSite(t)
	s.scenario(t)
	btc := payment.Bitcoin
	over := s.CreateIntent("order", "ORD-OVER", "cust-o", "10.00", "BTC")
	amount := paywatchtest.Units(over.AmountBaseUnits)
	s.Pay(over, payment.Native, new(big.Int).Div(new(big.Int).Mul(amount, big.NewInt(3)), big.NewInt(2)), "over")
	s.Chains[btc].Mine(2)
	s.Sync(btc)
	tr := s.byClass(t, "overpaid")
	if tr.IntentID == nil || *tr.IntentID != over.ID || tr.Settled != amount.String() {
		t.Fatalf("overpaid transfer %+v, want it to pay %s with %s", tr, over.ID, amount)
	}
	left, _ := new(big.Int).SetString(tr.Unresolved, 10)
	wantAmount := payment.FormatUnits(left, 8) + " BTC"
	wantUSD := views.USDValue(left, s.Intent(over.ID).Rate.USDPerUnit, 8).String()

	ctx := browser(t, 1280)
	dir := shotDir(t)
	signInBrowser(t, ctx, s.URL, s.Keys["finance"])

	open(t, ctx, s.URL+"/console/transfers/"+tr.ID)
	tabs := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('.tabs a[data-tab]')).map(a => a.dataset.tab)`)
	if strings.Join(tabs, ",") != "credit_account,refunded,ignore" {
		t.Fatalf("an overpayment offers %v; crediting the intent it already pays is refused, so it is not offered", tabs)
	}
	shown := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('form.action')).filter(f => !f.hidden).map(f => f.dataset.action)`)
	if strings.Join(shown, ",") != "credit_account" {
		t.Fatalf("the page opens on %v, want credit_account", shown)
	}
	if got := text(t, ctx, "#surplus"); !strings.Contains(got, wantAmount) || !strings.Contains(got, wantUSD+" USD") {
		t.Fatalf("surplus on screen %q, want %s and %s USD", got, wantAmount, wantUSD)
	}
	if says := text(t, ctx, "#form-credit_account .says"); !strings.Contains(says, "Credits "+wantUSD+" USD, the surplus over intent "+over.ID) {
		t.Fatalf("credit_account says %q", says)
	}
	if acct := eval[string](t, ctx, `document.querySelector('#form-credit_account [name=account]').value`); acct != "cust-o" {
		t.Fatalf("account pre-filled %q, want the intent's cust-o", acct)
	}
	shoot(t, ctx, dir, "transfer-overpaid")
	run(t, ctx, chromedp.SendKeys(chromedp.CSS("#form-credit_account textarea"), "overpaid: surplus to the customer's balance"),
		chromedp.Click(chromedp.CSS(`#form-credit_account button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS(`#done-message, #error-message`)))
	if msg := eval[string](t, ctx, `(document.getElementById('error-message') || {}).textContent || ''`); msg != "" {
		t.Fatalf("crediting the surplus was refused: %s", msg)
	}
	if got := s.transfer(t, tr.ID); got.Resolution == nil || got.Resolution.Action != finance.ActionCreditAccount || got.Resolution.AmountUSD != wantUSD {
		t.Fatalf("API shows %+v, want credit_account of %s USD", got.Resolution, wantUSD)
	}
	// Decided: the surplus is still shown, with nothing left to decide.
	if got := text(t, ctx, "#surplus"); !strings.Contains(got, wantAmount) || strings.Contains(got, "decide") {
		t.Fatalf("surplus after the decision %q, want %s and nothing to decide", got, wantAmount)
	}

	// Balances: every account is listed before anything is typed, and the
	// search narrows the list.
	open(t, ctx, s.URL+"/console/balances")
	got := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#accounts tr[data-account]')).map(r => r.dataset.account)`)
	want := []string{"cust-17", "cust-d", "cust-o", "cust-u"}
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("accounts listed %v, want %v", got, want)
	}
	if bal := text(t, ctx, `#accounts tr[data-account="cust-o"] td.num`); bal != wantUSD {
		t.Fatalf("cust-o's balance on the list %q, want %s", bal, wantUSD)
	}
	shoot(t, ctx, dir, "balances-accounts")
	if name := eval[string](t, ctx, `document.getElementById('account').name`); name != "q" {
		t.Fatalf("the balances page's box sends %q, want the search q", name)
	}
	open(t, ctx, s.URL+"/console/balances?q=-U")
	if got := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#accounts tr[data-account]')).map(r => r.dataset.account)`); strings.Join(got, ",") != "cust-u" {
		t.Fatalf("search -U lists %v, want cust-u", got)
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`#accounts tr[data-account="cust-u"] a`)), chromedp.WaitVisible(chromedp.ID("available")))
	if loc := eval[string](t, ctx, `location.search`); loc != "?account=cust-u" {
		t.Fatalf("the account link opened %s", loc)
	}

	// A phone: the inbox's rows are cards, nothing wider than the screen.
	run(t, ctx, chromedp.EmulateViewport(390, 844))
	open(t, ctx, s.URL+"/console/inbox?status=all")
	if n := len(inboxIDs(t, ctx)); n != 5 {
		t.Fatalf("%d rows on the phone, want 5", n)
	}
	if w := eval[int](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the inbox is %d px wide on a 390 px phone: it scrolls sideways", w)
	}
	if wide := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('main *')).filter(e => e.getBoundingClientRect().right > 391).map(e => e.tagName + '.' + e.className)`); len(wide) > 0 {
		t.Errorf("past the screen's right edge at 390 px: %v", wide)
	}
	shoot(t, ctx, dir, "inbox-phone")
}

// The webhook log names each delivered event by its type (the event id
// stays on hover), and the networks page says a chain without a finality
// marker counts by confirmations instead of showing "Final 0" (issue 36
// item 9).
func TestWebhookLogShowsEventTypesAndNetworksSayNoFinality(t *testing.T) {
	s := newSite(t)
	in := s.CreateIntent("order", "ORD-HOOK", "", "10.00", "BTC")
	delivered := deliverEvents(t, s, "shop")
	c := s.client(t)
	c.signIn(t, s.Keys["operator"])
	_, page := c.get(t, "/console/webhooks")
	cell := regexp.MustCompile(`<td class="event" title="` + regexp.QuoteMeta(delivered[len(delivered)-1]) + `">([^<]*)</td>`).FindStringSubmatch(page)
	if cell == nil || cell[1] != "intent.created" {
		t.Fatalf("the delivery of the intent's creation (%s) shows %q in the log, want intent.created:\n%s", in.ID, cell, page)
	}

	_, page = c.get(t, "/console/networks")
	row := regexp.MustCompile(`(?s)<tr data-network="bitcoin">.*?<td class="num final">(.*?)</td>`).FindStringSubmatch(page)
	if row == nil || strings.Contains(row[1], ">0<") || !strings.Contains(row[1], "by conf.") {
		t.Fatalf("bitcoin's final height cell %q, want it to say confirmations decide", row)
	}
}

// deliverEvents runs a real webhook sender for an endpoint name to a local
// receiver until it has delivered at least one event, and returns the ids
// of the events delivered.
func deliverEvents(t *testing.T, s *site, name string) []string {
	t.Helper()
	var got atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(recv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	sender := webhooks.New(webhooks.Endpoint{Name: name, URL: recv.URL, Secret: []byte(strings.Repeat("k", 32))},
		webhooks.Options{Store: s.Store, Clock: s.Clock, Poll: 100 * time.Millisecond})
	go func() { done <- sender.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	var delivered []string
	deadline := time.Now().Add(3 * time.Minute) // a safety net on a loaded machine
	for len(delivered) == 0 {
		as, err := s.Store.WebhookAttempts(context.Background(), name, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			if a.Outcome == "delivered" && a.EventID != "" {
				delivered = append(delivered, a.EventID)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no delivery recorded (%d POSTs received)", got.Load())
		}
		if len(delivered) == 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	return delivered
}

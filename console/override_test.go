package console_test

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/payment"
)

// The console's credit_account takes an override reason, as the API's
// "override" does (issue 22, item 3): without it a rate the rate book does
// not confirm is refused and nothing changes; with it the credit is made,
// as an override, within finance.max_override_credit_usd.
func TestConsoleCreditAccountOverride(t *testing.T) {
	s := newSite(t)
	btc := payment.Bitcoin
	var addr string
	var key []byte
	err := s.Store.Pool().QueryRow(context.Background(), `SELECT address, key FROM addresses
		WHERE network = 'bitcoin' AND key IN (SELECT key FROM free_addresses WHERE network = 'bitcoin') ORDER BY derivation_index DESC LIMIT 1`).Scan(&addr, &key)
	if err != nil {
		t.Fatal(err)
	}
	// 0.001 BTC to an address no intent has: 50.00 USD at the book's 50,000.
	s.Chains[btc].Send(chainstest.TxID("console-override"), 0, payment.Native, key, addr, big.NewInt(100_000))
	s.Chains[btc].Mine(2)
	s.Sync(btc)
	p := s.apiInbox(t, "classification=unknown_address")
	if len(p.Transfers) != 1 {
		t.Fatalf("inbox: %+v", p.Transfers)
	}
	tr := p.Transfers[0]
	c := s.client(t)
	csrf := c.signIn(t, s.Keys["finance"])
	credit := url.Values{"csrf": {csrf}, "action": {"credit_account"}, "account": {"cust-override"}, "usd_per_unit": {"60000"}, "note": {"customer's receipt"}}
	before := s.Counts()
	resp, body := c.post(t, "/console/transfers/"+tr.ID+"/resolve", credit)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "usd_per_unit") || !strings.Contains(body, `name="override_reason"`) {
		t.Fatalf("a rate 20%% off the book without an override: %d, want 400 naming usd_per_unit with the override field", resp.StatusCode)
	}
	if after := s.Counts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a refused credit changed %v -> %v", before, after)
	}
	credit.Set("override_reason", "rate of the customer's exchange receipt")
	resp, body = c.post(t, "/console/transfers/"+tr.ID+"/resolve", credit)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasSuffix(resp.Header.Get("Location"), "?done=1") {
		t.Fatalf("credit with an override: %d %s %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	if bal := s.Balance("cust-override"); bal.AvailableUSD != "60.00" {
		t.Fatalf("balance after the override: %+v, want 60.00", bal)
	}
	st, raw := s.Do("GET", "/v1/transfers/"+tr.ID, "finance", nil)
	if st != 200 || !strings.Contains(string(raw), `"rate_override":true`) || !strings.Contains(string(raw), "customer's exchange receipt") {
		t.Fatalf("the transfer does not show the override: %d %s", st, raw)
	}
}

// Issue 34 item 4: the console's credit_account with a usd_per_unit for a
// transfer whose rate is locked (an on-time overpayment's surplus) is
// refused naming the field, and nothing changes.
func TestConsoleCreditAccountRefusesARateForALockedTransfer(t *testing.T) {
	s := newSite(t)
	btc := payment.Bitcoin
	v := s.CreateIntent("order", "ORD-CONSOLE-LOCK", "", "100.00", "BTC")
	amount, _ := new(big.Int).SetString(v.AmountBaseUnits, 10)
	s.Pay(v, payment.Native, amount.Add(amount, big.NewInt(10_000)), "console-lock")
	s.Chains[btc].Mine(2)
	s.Sync(btc)
	tr := s.byClass(t, "overpaid")
	c := s.client(t)
	csrf := c.signIn(t, s.Keys["finance"])
	credit := url.Values{"csrf": {csrf}, "action": {"credit_account"}, "account": {"cust-lock"}, "usd_per_unit": {"50000"}, "note": {"surplus"}}
	before := s.Counts()
	resp, body := c.post(t, "/console/transfers/"+tr.ID+"/resolve", credit)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "usd_per_unit") || !strings.Contains(body, "locked") {
		t.Fatalf("usd_per_unit on a locked rate: %d, want 400 naming usd_per_unit", resp.StatusCode)
	}
	if after := s.Counts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a refused credit changed %v -> %v", before, after)
	}
	credit.Del("usd_per_unit")
	if resp, body = c.post(t, "/console/transfers/"+tr.ID+"/resolve", credit); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("credit at the lock: %d %s", resp.StatusCode, body)
	}
	if bal := s.Balance("cust-lock"); bal.AvailableUSD != "5.00" {
		t.Fatalf("balance %+v, want 5.00", bal)
	}
}

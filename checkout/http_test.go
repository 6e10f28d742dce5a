package checkout_test

import (
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/intents/intentstest"
	"github.com/paywatch/paywatch/payment"
)

// A page's live stream follows its intent through the real pipeline
// (scripted bitcoin chain, scanner, decisions on PostgreSQL): waiting; half
// paid (underpaid, with the exact rest, same address); the rest in the
// mempool (0 of 2 confirmations); mined (1 of 2: no event, the progress
// check); confirmed (paid, the last message, the stream ends).
func TestLivePageFollowsPayments(t *testing.T) {
	s := newSite(t, siteOptions{})
	btc := payment.Bitcoin
	in := s.create(t, "ORD-LIVE-1", "100.00", nil)
	path := s.pageOf(t, in)
	resp, body := s.get(t, path)
	if resp.StatusCode != 200 || !strings.Contains(body, `<code id="amount" aria-describedby="amount-label">`+payment.TrimUnits(intentstest.Units(in.AmountBaseUnits), 8)+`</code>`) ||
		!strings.Contains(body, in.Address) {
		t.Fatalf("page: %d\n%s", resp.StatusCode, body)
	}
	st := s.openStream(t, path+"/live")
	if m := st.next(t, 10*time.Second); m.State != "waiting" || !m.Open || m.Final {
		t.Fatalf("first message %+v", m)
	}

	part := half(in)
	s.Pay(in, payment.Native, part, "half")
	s.Sync(btc)
	m := st.until(t, "underpaid", 10*time.Second)
	missing := payment.TrimUnits(rest(in, part), 8)
	if !strings.Contains(m.HTML, missing+" BTC are still missing") || !strings.Contains(m.HTML, "to the same address") || !m.Open {
		t.Fatalf("underpaid says %q, want the missing %s BTC", m.HTML, missing)
	}

	s.broadcast(t, in, payment.Native, rest(in, part), "rest")
	s.Sync(btc)
	m = st.until(t, "confirming", 10*time.Second)
	if !strings.Contains(m.HTML, "0 of 2 confirmations") || m.Open {
		t.Fatalf("in the mempool: %q", m.HTML)
	}
	s.Chains[btc].Mine(1)
	s.Sync(btc)
	// The rest is in a block: 1 of 2 (the first half has 2). No event says
	// so: the page learns it from the progress check.
	for m = st.next(t, 10*time.Second); !strings.Contains(m.HTML, "1 of 2 confirmations"); m = st.next(t, 10*time.Second) {
		if m.State != "confirming" {
			t.Fatalf("before the second block: %+v", m)
		}
	}
	s.Chains[btc].Mine(1)
	s.Sync(btc)
	m = st.until(t, "paid", 10*time.Second)
	if !m.Final || m.Open || !strings.Contains(m.HTML, "Paid. Thank you!") {
		t.Fatalf("paid: %+v", m)
	}
	select {
	case _, ok := <-st.msgs:
		if ok {
			t.Fatal("a message after the final one")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end after paid")
	}
}

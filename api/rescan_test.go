package api_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// A rescan may start anywhere from 0 to the scanned height + 1, never above
// the node's tip: a start above would skip the blocks between (or wedge the
// scanner above the tip). Out of range is 400 naming the range, and nothing
// changes.
func TestRescanOutsideTheScannedRangeIsRefused(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	f := e.Chains[payment.Bitcoin]
	f.Mine(5)
	e.Sync(payment.Bitcoin)
	c, err := e.Store.GetCursor(context.Background(), "bitcoin")
	if err != nil {
		t.Fatal(err)
	}
	scanned := c.Height
	for _, from := range []int64{scanned + 2, scanned + 50, -1} {
		st, body := e.Do("POST", "/v1/networks/bitcoin/rescan", "operator", map[string]int64{"from_height": from})
		if st != 400 || errCode(t, body) != "invalid_request" || !strings.Contains(string(body), "0") {
			t.Fatalf("rescan from %d (scanned %d): %d %s, want 400 invalid_request", from, scanned, st, body)
		}
		if from >= 0 && !strings.Contains(string(body), strconv.FormatInt(scanned, 10)) {
			t.Fatalf("rescan from %d: %s does not name the valid range 0 … %d", from, body, scanned)
		}
		after, err := e.Store.GetCursor(context.Background(), "bitcoin")
		if err != nil {
			t.Fatal(err)
		}
		if after.RescanFrom != nil || after.Height != scanned {
			t.Fatalf("a refused rescan changed the cursor: %+v", after)
		}
	}
	// Caught up, scanned+1 is above the node's tip: refused too.
	st, body := e.Do("POST", "/v1/networks/bitcoin/rescan", "operator", map[string]int64{"from_height": scanned + 1})
	if st != 400 {
		t.Fatalf("rescan from above the node's tip %d: %d %s", scanned, st, body)
	}
	for _, from := range []int64{0, scanned} {
		if st, body := e.Do("POST", "/v1/networks/bitcoin/rescan", "operator", map[string]int64{"from_height": from}); st != 202 {
			t.Fatalf("rescan from %d: %d %s", from, st, body)
		}
		e.Sync(payment.Bitcoin)
	}
	if got, _ := e.Store.GetCursor(context.Background(), "bitcoin"); got.Height != int64(f.TipHeight()) {
		t.Fatalf("after rescans cursor %d, tip %d", got.Height, f.TipHeight())
	}
}

// A single-source rates setup is explicit in config and shown in /v1/status.
func TestStatusShowsASingleRateSource(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	st, body := e.Do("GET", "/v1/status", "operator", nil)
	if st != 200 || !strings.Contains(string(body), `"rates":{"sources":["static"],"min_sources":1,"single_source":true}`) {
		t.Fatalf("status: %d %s, want the single static rate source shown", st, body)
	}
}

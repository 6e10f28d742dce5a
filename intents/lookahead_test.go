package intents_test

import (
	"testing"

	"github.com/paywatch/paywatch/paywatchtest"
)

// EnsureLookahead, which counts every derived network's free addresses in
// one statement, derives what Replenish of each did: a network below its
// low mark (the gap, 3 here) is topped up to twice the gap from the next
// index, and one at the mark or above derives nothing (issue 37 item 3).
func TestEnsureLookaheadTopsUpOnlyTheNetworksBelowTheirMark(t *testing.T) {
	e := paywatchtest.New(t)
	ctx := t.Context()
	free := func(network string) int {
		t.Helper()
		var n int
		if err := e.Store.Pool().QueryRow(ctx, `SELECT count(*) FROM free_addresses WHERE network = $1`, network).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	next := func(network string) int64 {
		t.Helper()
		var n int64
		if err := e.Store.Pool().QueryRow(ctx, `SELECT next_index FROM derivation_counters WHERE network = $1`, network).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Free addresses taken away without a creation: no round is asked for.
	take := func(network string, n int) {
		t.Helper()
		if _, err := e.Store.Pool().Exec(ctx, `DELETE FROM free_addresses WHERE (network, lane, ord) IN (
			SELECT network, lane, ord FROM free_addresses WHERE network = $1 ORDER BY ord LIMIT $2)`, network, n); err != nil {
			t.Fatal(err)
		}
	}
	derived := []string{"bitcoin", "litecoin", "ethereum", "tron"}
	before := map[string]int64{}
	for _, n := range derived {
		if got := free(n); got != 6 {
			t.Fatalf("%s: %d free at start, want twice the gap (6)", n, got)
		}
		before[n] = next(n)
	}
	take("bitcoin", 4)  // 2 free: below the mark
	take("litecoin", 3) // 3 free: at the mark
	take("tron", 6)     // none free
	if err := e.Service.EnsureLookahead(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		free    int
		derived int64
	}{"bitcoin": {6, 4}, "litecoin": {3, 0}, "ethereum": {6, 0}, "tron": {6, 6}}
	for _, n := range derived {
		if got, d := free(n), next(n)-before[n]; got != want[n].free || d != want[n].derived {
			t.Errorf("%s after EnsureLookahead: %d free, %d derived; want %d free, %d derived", n, got, d, want[n].free, want[n].derived)
		}
	}
	// The new ones are watched in the service's sets, as a round's are.
	var key []byte
	if err := e.Store.Pool().QueryRow(ctx, `SELECT key FROM addresses WHERE network = 'tron' AND derivation_index = $1`, before["tron"]+5).Scan(&key); err != nil {
		t.Fatal(err)
	}
	if !e.Watch["tron"].Contains(key) {
		t.Error("an address EnsureLookahead derived is not in the watched set")
	}
}

package api_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/paywatchtest"
)

// Long-polls beyond events.max_waiters_per_key for one key, or
// events.max_waiters in all, get 429 rate_limited with Retry-After; once
// the waiters are answered, their slots are free again.
func TestLongPollCapsGive429(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.WithConfig(func(c *config.Config) {
		c.Events.MaxWaiters, c.Events.MaxWaitersPerKey = 3, 2
		c.Events.PollInterval = config.Duration{Duration: 2 * time.Second}
	}))
	created := e.CreateIntent("order", "ORD-LP-1", "", "10.00", "ETH")
	status, body := e.Do("GET", "/v1/events", "storefront", nil)
	if status != 200 {
		t.Fatalf("feed: %d %s", status, body)
	}
	next := decodeInto[struct{ Next string }](t, body).Next
	if next == "" {
		t.Fatalf("no event after creating %s: %s", created.ID, body)
	}
	get := func(scope string) (int, http.Header, []byte) {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", e.Server.URL+"/v1/events?wait=30s&after="+next, nil)
		req.Header.Set("Authorization", "Bearer "+e.Keys[scope])
		resp, err := e.Server.Client().Do(req)
		if err != nil {
			t.Error(err)
			return 0, nil, nil
		}
		defer resp.Body.Close()
		var buf [4096]byte
		n, _ := resp.Body.Read(buf[:])
		return resp.StatusCode, resp.Header, buf[:n]
	}
	var wg sync.WaitGroup
	statuses := make(chan int, 3)
	wait := func(scope string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, _, b := get(scope)
			if s != 200 {
				t.Errorf("waiting %s long-poll: %d %s", scope, s, b)
			}
			statuses <- s
		}()
	}
	waitN := func(n int) {
		deadline := time.Now().Add(30 * time.Second)
		for e.API.LongPolls() != n {
			if time.Now().After(deadline) {
				t.Fatalf("%d long-polls waiting, want %d", e.API.LongPolls(), n)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	refused := func(scope string) {
		t.Helper()
		s, h, b := get(scope)
		if s != http.StatusTooManyRequests || errCode(t, b) != "rate_limited" || h.Get("Retry-After") != "2" {
			t.Fatalf("long-poll beyond the cap (%s): %d Retry-After %q %s", scope, s, h.Get("Retry-After"), b)
		}
	}
	wait("storefront")
	wait("storefront")
	waitN(2)
	refused("storefront") // the key's cap
	wait("all")           // another key: the third slot
	waitN(3)
	refused("all") // the instance's cap
	if e.API.LongPolls() != 3 {
		t.Fatalf("a refused request holds a slot: %d waiting", e.API.LongPolls())
	}
	// An event answers the three; the slots are free again.
	e.CreateIntent("order", "ORD-LP-2", "", "10.00", "ETH")
	wg.Wait()
	close(statuses)
	for s := range statuses {
		if s != 200 {
			t.Fatalf("waiter answered %d", s)
		}
	}
	waitN(0)
	status, body = e.Do("GET", "/v1/events?wait=1s&after="+next, "storefront", nil)
	if status != 200 || len(decodeInto[struct{ Events []any }](t, body).Events) != 1 {
		t.Fatalf("after the event: %d %s", status, body)
	}
}

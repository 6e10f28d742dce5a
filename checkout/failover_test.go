package checkout_test

import (
	"context"
	"testing"
	"time"

	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/paywatchtest"
)

// While the database is away (a failover), a payment page answers 503
// with Retry-After, not 500; it answers again once the database does.
func TestPageDuringAFailoverIs503WithRetryAfter(t *testing.T) {
	var p *devnet.Proxy
	var direct string
	s := newSite(t, siteOptions{env: []paywatchtest.Option{paywatchtest.BehindProxy(&p, &direct)}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Store.Run(ctx)
	in := s.create(t, "ORD-FAILOVER", "10.00", nil)
	path := s.pageOf(t, in)
	if resp, _ := s.get(t, path); resp.StatusCode != 200 {
		t.Fatalf("page before: %d", resp.StatusCode)
	}
	p.Blackhole()
	resp, _ := s.get(t, path)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("page while the database is away: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	p.Open()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if resp, _ := s.get(t, path); resp.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the page does not answer again once the database does")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

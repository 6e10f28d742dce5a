package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/paywatchtest"
)

// While the database is away (a failover), a console page answers 503
// with Retry-After and says nothing was done, not a 500; it answers again
// once the database does.
func TestConsoleDuringAFailoverIs503WithRetryAfter(t *testing.T) {
	var p *devnet.Proxy
	var direct string
	s := newSite(t, paywatchtest.BehindProxy(&p, &direct))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Store.Run(ctx)
	c := s.client(t)
	c.signIn(t, s.Keys["all"])
	if resp, _ := c.get(t, "/console/search"); resp.StatusCode != 200 {
		t.Fatalf("search before: %d", resp.StatusCode)
	}
	p.Blackhole()
	resp, body := c.get(t, "/console/search")
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "nothing was done") {
		t.Fatalf("console while the database is away: %d, Retry-After %q\n%.500s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	p.Open()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if resp, _ := c.get(t, "/console/search"); resp.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the console does not answer again once the database does")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

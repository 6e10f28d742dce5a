package endpoints_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/clock"
)

// Issue 33 item 5: a second source's reads never go to the endpoint that
// served the scan; an endpoint of role verify is asked before one of role
// both; all of a verification's reads go to one endpoint; with the scan's
// endpoint unknown only role verify may answer; with none left the read
// fails rather than asking the scanner's endpoint again. The scanner's own
// reads never go to an endpoint of role verify.
func TestVerifyReadsGoToAnotherProvider(t *testing.T) {
	clk := clock.NewFake(t0)
	scan, both, ver := newNode(t, "scan"), newNode(t, "both"), newNode(t, "ver")
	vs := spec(ver, 5)
	vs.Scans = false
	p := newPool(t, clk, spec(scan, 0), spec(both, 1), vs)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if who, err := get(ctx, t, p, ""); err != nil || who != "scan" {
			t.Fatalf("scan read %d: %q %v", i, who, err)
		}
	}
	if got := p.Verifiers("scan"); !slices.Equal(got, []string{"both", "ver"}) {
		t.Fatalf("Verifiers(scan) = %v", got)
	}
	if got := p.Verifiers(""); !slices.Equal(got, []string{"ver"}) {
		t.Fatalf("Verifiers(\"\") = %v", got)
	}
	vctx := endpoints.Verify(ctx, "scan", 0)
	for i := 0; i < 2; i++ {
		if who, err := get(vctx, t, p, ""); err != nil || who != "ver" {
			t.Fatalf("verify read %d: %q %v, want ver", i, who, err)
		}
	}
	if endpoints.ServedBy(vctx) != "ver" {
		t.Fatalf("ServedBy = %q", endpoints.ServedBy(vctx))
	}
	// The verify endpoint down: the other provider of role both answers,
	// never the scanner's.
	ver.set(func(w http.ResponseWriter) bool { w.WriteHeader(http.StatusBadGateway); return true })
	if who, err := get(endpoints.Verify(ctx, "scan", 0), t, p, ""); err != nil || who != "both" {
		t.Fatalf("verify with ver down: %q %v, want both", who, err)
	}
	// Scanned by "both": ver is down, so nothing but "scan" is left.
	if who, err := get(endpoints.Verify(ctx, "both", 0), t, p, ""); err != nil || who != "scan" {
		t.Fatalf("verify of both's block: %q %v, want scan", who, err)
	}
	// Unknown scanner and ver down (past its backoff, so it is asked and
	// fails): no endpoint, never a scanning one.
	clk.Advance(time.Minute)
	before := scan.count() + both.count()
	if who, err := get(endpoints.Verify(ctx, "", 0), t, p, ""); !errors.Is(err, endpoints.ErrNoEndpoint) {
		t.Fatalf("verify of an unknown scanner's block with ver down: %q %v, want ErrNoEndpoint", who, err)
	}
	if after := scan.count() + both.count(); after != before {
		t.Fatalf("a scanning endpoint answered a verification of an unknown scanner's block")
	}
}

// Issue 33 item 5: the reconciler's reads (Elsewhere) go to another
// endpoint than the one serving the scanner now, all to one, and to the
// scanner's endpoint only when it is the only one.
func TestElsewhereAvoidsTheScannersEndpoint(t *testing.T) {
	clk := clock.NewFake(t0)
	a, b := newNode(t, "a"), newNode(t, "b")
	p := newPool(t, clk, spec(a, 0), spec(b, 1))
	ctx := context.Background()
	if who, err := get(ctx, t, p, ""); err != nil || who != "a" {
		t.Fatalf("scan: %q %v", who, err)
	}
	ectx := endpoints.Elsewhere(ctx, 0)
	for i := 0; i < 2; i++ {
		if who, err := get(ectx, t, p, ""); err != nil || who != "b" {
			t.Fatalf("elsewhere read %d: %q %v, want b", i, who, err)
		}
	}
	// b down: the scanner's own endpoint rather than nothing.
	b.set(func(w http.ResponseWriter) bool { w.WriteHeader(http.StatusBadGateway); return true })
	if who, err := get(endpoints.Elsewhere(ctx, 0), t, p, ""); err != nil || who != "a" {
		t.Fatalf("elsewhere with b down: %q %v, want a", who, err)
	}
	// The scanner reads from b (a down): the reconciler then prefers a.
	b.set(nil)
	clk.Advance(time.Minute)
	a.set(func(w http.ResponseWriter) bool { w.WriteHeader(http.StatusBadGateway); return true })
	if who, err := get(ctx, t, p, ""); err != nil || who != "b" {
		t.Fatalf("scan with a down: %q %v", who, err)
	}
	a.set(nil)
	clk.Advance(time.Minute)
	if who, err := get(endpoints.Elsewhere(ctx, 0), t, p, ""); err != nil || who != "a" {
		t.Fatalf("elsewhere while b scans: %q %v, want a", who, err)
	}
}

// Issue 33 item 5: a block's reads name the endpoint that served them
// only when one endpoint answered them all; a read moved on to another
// (here by Refuse) names none, so its second source must be of role
// verify.
func TestOnlyServerNamesOneEndpointOrNone(t *testing.T) {
	clk := clock.NewFake(t0)
	a, b := newNode(t, "a"), newNode(t, "b")
	p := newPool(t, clk, spec(a, 0), spec(b, 1))
	ctx := context.Background()
	p.Probe(ctx, endpoints.Probes{Head: func(context.Context) (int64, error) { return 10, nil }}, false, time.Second)
	one := endpoints.Pin(ctx, 5)
	for i := 0; i < 2; i++ {
		if who, err := get(one, t, p, ""); err != nil || who != "a" {
			t.Fatalf("read %d: %q %v", i, who, err)
		}
	}
	if got := endpoints.OnlyServer(one); got != "a" {
		t.Fatalf("OnlyServer after a's reads = %q, want a", got)
	}
	two := endpoints.Pin(ctx, 5)
	if who, err := get(two, t, p, ""); err != nil || who != "a" {
		t.Fatalf("first read: %q %v", who, err)
	}
	if !endpoints.Refuse(two, "answered as if it lacked the block") {
		t.Fatal("Refuse did not move the read")
	}
	if who, err := get(two, t, p, ""); err != nil || who != "b" {
		t.Fatalf("read after Refuse: %q %v, want b", who, err)
	}
	if got := endpoints.OnlyServer(two); got != "" {
		t.Fatalf("OnlyServer of a read answered by a and b = %q, want none", got)
	}
	if got := endpoints.OnlyServer(ctx); got != "" {
		t.Fatalf("OnlyServer without a pin = %q", got)
	}
}

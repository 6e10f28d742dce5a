package paywatchtest

import (
	"context"
	"encoding/json"
	"time"

	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// RunUntilCritical runs a new scanner of network n over src (Scanner.Run,
// which records the network's health after each step) until GET /v1/status
// reports the network critical, and returns that message. It fails the test
// after 30 s, or when Run returns first.
func (e *Env) RunUntilCritical(n payment.Network, src chains.Source) string {
	e.T.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.NewScanner(n, src).Run(ctx) }()
	returned := false
	defer func() {
		cancel()
		if !returned {
			<-done
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := e.Do("GET", "/v1/status", "operator", nil)
		if status != 200 {
			e.T.Fatalf("status: %d %s", status, body)
		}
		var st struct {
			Networks []availability.NetworkStatus `json:"networks"`
		}
		if err := json.Unmarshal(body, &st); err != nil {
			e.T.Fatal(err)
		}
		for _, ns := range st.Networks {
			if ns.Network == string(n) && ns.Critical != "" {
				return ns.Critical
			}
		}
		select {
		case err := <-done:
			returned = true
			e.T.Fatalf("the %s scanner returned %v before its network was critical", n, err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			e.T.Fatalf("%s not critical after 30 s: %s", n, body)
		}
	}
}

package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/paywatch/paywatch/store"
)

// Issue 33 item 6: each instance records its endpoints (an upsert), and
// the status reads each endpoint as last recorded, by name.
func TestEndpointsRecordedAndReadByName(t *testing.T) {
	s := fresh(t)
	ctx := context.Background()
	rows := []store.EndpointRow{{Name: "own", State: "healthy", Head: 100, CallsPerMinute: 20}, {Name: "trongrid", State: "throttled", Head: 99, Lag: 1, Throttles: 3, BudgetUsed: 50, DailyBudget: 1000}}
	for i := 0; i < 2; i++ { // a replay changes nothing
		if err := s.RecordEndpoints(ctx, "tron", "a", rows, now); err != nil {
			t.Fatal(err)
		}
	}
	later := now.Add(time.Minute)
	if err := s.RecordEndpoints(ctx, "tron", "b", []store.EndpointRow{{Name: "own", State: "unreachable", Head: 100, Errors: 4}}, later); err != nil {
		t.Fatal(err)
	}
	got, err := s.Endpoints(ctx, "tron", now.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "own" || got[0].State != "unreachable" || got[0].Instance != "b" || got[1].Name != "trongrid" || got[1].Throttles != 3 || got[1].DailyBudget != 1000 {
		t.Fatalf("%+v", got)
	}
	if got, _ := s.Endpoints(ctx, "tron", later.Add(time.Second)); len(got) != 0 {
		t.Fatalf("stale rows read: %+v", got)
	}
	if err := s.RecordEndpoints(ctx, "tron", "a", []store.EndpointRow{{Name: "x", State: "sideways"}}, now); err == nil {
		t.Fatal("an unknown state was stored")
	}
}

package store_test

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// A batch's first round trip claims the keys it can (one already used is
// reported, per claim), ensures every payable (new or as stored, in the
// order asked), and hands the free addresses to the intents in order,
// fewer when fewer are free; the rest of the batch writes its intents,
// responses and events in one statement each, events in the order given.
func TestBeginCreationsAndTheirWrites(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	_, key, err := s.CreateAPIKey(ctx, "batch-"+now.Format("150405.000000"), []string{"storefront"}, now)
	if err != nil {
		t.Fatal(err)
	}
	network, source := "bitcoin", store.NewID("src")
	var rows []store.Address
	for i := range 2 {
		rows = append(rows, store.Address{Network: network, Key: []byte(store.NewID("k")), Address: store.NewID("bc1q"),
			Source: source, Index: int64(i), CreatedAt: now})
	}
	old := store.Payable{Kind: "order", Reference: store.NewID("OLD"), AmountCents: 500, CreatedAt: now}
	err = s.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.AddAddresses(ctx, rows); err != nil {
			return err
		}
		if _, _, err := tx.ClaimIdempotencyKey(ctx, key.ID, "used", []byte("h"), now); err != nil {
			return err
		}
		_, err := tx.EnsurePayable(ctx, old)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	fresh := store.Payable{Kind: "order", Reference: store.NewID("NEW"), AmountCents: 700, CreatedAt: now}
	asked := store.Creations{
		Claims:    []store.IdempotencyClaim{{APIKeyID: key.ID, Key: "new", Hash: []byte("h")}, {APIKeyID: key.ID, Key: "used", Hash: []byte("h")}},
		Payables:  []store.Payable{fresh, {Kind: "order", Reference: old.Reference, AmountCents: 999, CreatedAt: now}, {Kind: "topup", Reference: fresh.Reference, Account: "acct-1", AmountCents: 100, CreatedAt: now}},
		IntentIDs: []string{"pi_b0", "pi_b1", "pi_b2"},
		Network:   network, Source: source, Now: now,
	}
	// A rolled-back batch frees its addresses and claims.
	for range 2 {
		tx, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tx.BeginCreations(ctx, asked)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Claimed) != 2 || !got.Claimed[0] || got.Claimed[1] {
			t.Fatalf("claimed %v, want [true false]: the second key was used", got.Claimed)
		}
		if got.Payables[0].Reference != fresh.Reference || got.Payables[0].AmountCents != 700 ||
			got.Payables[1].Reference != old.Reference || got.Payables[1].AmountCents != 500 ||
			got.Payables[2].Kind != "topup" || got.Payables[2].Account != "acct-1" {
			t.Fatalf("payables out of order or not as stored: %+v", got.Payables)
		}
		if len(got.Open) != 3 || got.Open[0] || got.Open[1] || got.Open[2] {
			t.Fatalf("open %v: no payable has an intent yet", got.Open)
		}
		if len(got.Taken) != 2 || got.Taken[0].IntentID != "pi_b0" || got.Taken[0].Index != 0 ||
			got.Taken[1].IntentID != "pi_b1" || got.Taken[1].Index != 1 || string(got.Taken[1].Key) != string(rows[1].Key) {
			t.Fatalf("taken %+v: want indexes 0 and 1 for the first two intents, none for the third", got.Taken)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if free, err := s.FreeDerived(ctx, network, source); err != nil || free != 2 {
		t.Fatalf("free after the rollbacks: %d, %v", free, err)
	}

	// A committed batch of two: intents, responses and events.
	err = s.InTx(ctx, func(tx *store.Tx) error {
		got, err := tx.BeginCreations(ctx, store.Creations{
			Claims:    []store.IdempotencyClaim{{APIKeyID: key.ID, Key: "new", Hash: []byte("h")}},
			Payables:  []store.Payable{fresh, old},
			IntentIDs: []string{"pi_c0", "pi_c1"}, Network: network, Source: source, Now: now,
		})
		if err != nil {
			return err
		}
		var ins []store.Intent
		for i, a := range got.Taken {
			ins = append(ins, store.Intent{ID: a.IntentID, PayableID: got.Payables[i].ID, Method: "BTC", Network: network, Asset: "BTC",
				Amount: big.NewInt(int64(1000 + i)), Tolerance: big.NewInt(0), DustMin: big.NewInt(546), Address: a.Address, AddressKey: a.Key,
				Rate: "90000.5", RateSources: []string{"one", "two"}, RateAt: now, ExpiresAt: now.Add(time.Hour),
				Status: payment.IntentAwaiting, ConfirmationsRequired: 2, CreatedAt: now})
		}
		tx.QueueInsertIntents(ins)
		tx.QueueSaveIdempotentResponses([]store.SavedResponse{{APIKeyID: key.ID, Key: "new", Status: 1, Body: []byte(`{"id":"pi_c0"}`)}})
		return tx.QueueAppendEvents(payment.EventIntentCreated, []store.NewEvent{{IntentID: "pi_c0", Data: map[string]int{"n": 0}},
			{IntentID: "pi_c1", Account: "acct", Data: map[string]int{"n": 1}}}, now)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"pi_c0", "pi_c1"} {
		in, err := s.GetIntent(ctx, id)
		if err != nil || in.Amount.Int64() != int64(1000+i) || in.Address != rows[i].Address || len(in.RateSources) != 2 ||
			in.RateSources[1] != "two" || in.Rate != "90000.5" || in.ConfirmationsRequired != 2 || !in.ExpiresAt.Equal(now.Add(time.Hour)) {
			t.Fatalf("intent %s as stored: %+v, %v", id, in, err)
		}
	}
	// A payable with an open intent is marked (its creation runs alone);
	// past the intents' deadline none is open.
	other := store.Payable{Kind: "order", Reference: store.NewID("OTHER"), AmountCents: 700, CreatedAt: now}
	for _, tc := range []struct {
		at   time.Time
		want []bool
	}{{now.Add(time.Minute), []bool{false, true, true}}, {now.Add(2 * time.Hour), []bool{false, false, false}}} {
		tx, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tx.BeginCreations(ctx, store.Creations{Payables: []store.Payable{other, old, fresh},
			IntentIDs: []string{"pi_d0", "pi_d1", "pi_d2"}, Network: network, Source: source, Now: tc.at})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got.Open) != fmt.Sprint(tc.want) {
			t.Errorf("open at %v: %v, want %v", tc.at, got.Open, tc.want)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The console finds an intent by its address (through the (network,
	// address) index: no index of its own, see migration 0017).
	hits, err := s.Search(ctx, "", rows[1].Address)
	if err != nil || len(hits) != 1 || hits[0].Kind != "intent" || hits[0].ID != "pi_c1" {
		t.Fatalf("search by address %s: %+v, %v", rows[1].Address, hits, err)
	}
	conn, err := s.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	var plan string
	if err := conn.QueryRow(ctx, `SELECT set_config('enable_seqscan', 'off', false)`).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	rowsPlan, err := conn.Query(ctx, `EXPLAIN SELECT id FROM intents WHERE network = ANY($2) AND address = $1`,
		rows[1].Address, []string{"bitcoin", "litecoin", "ethereum", "tron", "solana"})
	if err != nil {
		t.Fatal(err)
	}
	plan = ""
	for rowsPlan.Next() {
		var line string
		if err := rowsPlan.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan += line + "\n"
	}
	rowsPlan.Close()
	if _, err := conn.Exec(ctx, `RESET enable_seqscan`); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "intents_network_address_key") {
		t.Fatalf("the search by address does not use the (network, address) index:\n%s", plan)
	}

	prev, err := s.IdempotentResponse(ctx, key.ID, "new")
	if err != nil || prev.Status != 1 || string(prev.Body) != `{"id":"pi_c0"}` {
		t.Fatalf("saved response: %+v, %v", prev, err)
	}
	evs, err := s.EventsAfter(ctx, 0, []string{string(payment.EventIntentCreated)}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var mine []store.Event
	for _, e := range evs {
		if e.IntentID == "pi_c0" || e.IntentID == "pi_c1" {
			mine = append(mine, e)
		}
	}
	if len(mine) != 2 || mine[0].IntentID != "pi_c0" || mine[1].IntentID != "pi_c1" || mine[1].Seq != mine[0].Seq+1 ||
		mine[1].Account != "acct" || string(mine[1].Data) != `{"n": 1}` {
		t.Fatalf("events: %+v, want pi_c0 then pi_c1 with consecutive seqs", mine)
	}
}

// Taking addresses keeps the plan PostgreSQL caches for the statement
// (generic): it is not planned anew at every batch. With the intents'
// count alone as the limit, the generic plan was costed for a tenth of the
// free rows, a plan made for the count at hand (custom) always looked
// cheaper, and a sustained run of creations planned the statement at
// every batch (issue 37 item 2).
func TestTakingAddressesKeepsItsCachedPlan(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	network, source := "bitcoin", store.NewID("src")
	rows := make([]store.Address, 2000)
	for i := range rows {
		rows[i] = store.Address{Network: network, Key: []byte(store.NewID("k")), Address: store.NewID("bc1q"),
			Source: source, Index: int64(i), CreatedAt: now}
	}
	if err := s.InTx(ctx, func(tx *store.Tx) error { _, err := tx.AddAddresses(ctx, rows); return err }); err != nil {
		t.Fatal(err)
	}
	conn, err := s.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `ANALYZE free_addresses`); err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	const name = "take_derived_plan_test"
	if _, err := tx.Prepare(ctx, name, store.TakeDerivedManySQL); err != nil {
		t.Fatal(err)
	}
	ids := func() []string {
		ids := make([]string, 5)
		for i := range ids {
			ids[i] = store.NewID("pi")
		}
		return ids
	}
	// PostgreSQL makes five custom plans before it weighs the generic one.
	for range 6 {
		r, err := tx.Query(ctx, name, network, source, ids())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for r.Next() {
			n++
		}
		if r.Close(); r.Err() != nil || n != 5 {
			t.Fatalf("took %d addresses, want 5: %v", n, r.Err())
		}
	}
	// EXPLAIN EXECUTE takes no parameters: the arguments are literals.
	pg := conn.Conn().PgConn()
	lit := func(v string) string {
		e, err := pg.EscapeString(v)
		if err != nil {
			t.Fatal(err)
		}
		return "'" + e + "'"
	}
	args := []string{lit(network), lit(source)}
	var arr []string
	for _, id := range ids() {
		arr = append(arr, lit(id))
	}
	args = append(args, "ARRAY["+strings.Join(arr, ", ")+"]")
	r, err := tx.Query(ctx, `EXPLAIN EXECUTE `+name+`(`+strings.Join(args, ", ")+`)`)
	if err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	for r.Next() {
		var line string
		if err := r.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if r.Close(); r.Err() != nil {
		t.Fatal(r.Err())
	}
	if !strings.Contains(plan.String(), "network = $1") {
		t.Fatalf("taking addresses was planned for its arguments (a custom plan), not from the cached plan:\n%s", plan.String())
	}
}

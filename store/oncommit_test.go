package store_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// TestOnCommitSaysWhetherEventsWereAppended: the simulator reads the
// events after a commit only when OnCommit says the transaction appended
// one, so every way of appending an event must say so, and a transaction
// without one must not.
func TestOnCommitSaysWhetherEventsWereAppended(t *testing.T) {
	s := fresh(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var got []bool
	s.OnCommit(func(events bool) {
		mu.Lock()
		got = append(got, events)
		mu.Unlock()
	})
	defer s.OnCommit(nil)
	cases := []struct {
		name string
		fn   func(*store.Tx) error
		want bool
	}{
		{"no event", func(tx *store.Tx) error {
			return tx.PutBlock(ctx, "bitcoin", store.BlockRef{Height: 1, Hash: "h1", Parent: "h0"}, now)
		}, false},
		{"AppendEvent", func(tx *store.Tx) error {
			_, err := tx.AppendEvent(ctx, payment.EventLedgerCredited, "", "", "acct-1", map[string]int{"n": 1}, now)
			return err
		}, true},
		{"QueueAppendEvent", func(tx *store.Tx) error {
			return tx.QueueAppendEvent(payment.EventLedgerCredited, "", "", "acct-1", map[string]int{"n": 2}, now)
		}, true},
		{"QueueAppendStoreEvent", func(tx *store.Tx) error {
			return tx.QueueAppendStoreEvent("", payment.EventLedgerCredited, "acct-1", map[string]int{"n": 4}, now)
		}, true},
		{"QueueAppendEvents", func(tx *store.Tx) error {
			return tx.QueueAppendEvents(payment.EventLedgerCredited, []store.NewEvent{{Account: "acct-1", Data: map[string]int{"n": 3}}}, now)
		}, true},
	}
	for _, c := range cases {
		got = nil
		if err := s.InTx(ctx, c.fn); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("%s through InTx: OnCommit got %v, want [%v]", c.name, got, c.want)
		}
		got = nil
		tx, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.fn(tx); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatalf("%s: commit: %v", c.name, err)
		}
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("%s through Begin and Commit: OnCommit got %v, want [%v]", c.name, got, c.want)
		}
	}
}

// TestEveryEventAppendTellsOnCommit: a function of the store that sends
// an event append (the paywatch_append_* functions of the schema) also
// marks its transaction, so a way of appending events added later cannot
// leave the simulator's body check blind to its events.
func TestEveryEventAppendTellsOnCommit(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			body := string(src[fset.Position(fn.Body.Pos()).Offset:fset.Position(fn.Body.End()).Offset])
			if !strings.Contains(body, "paywatch_append") && !strings.Contains(body, "appendEventSQL") {
				continue
			}
			found++
			if !strings.Contains(body, "t.events = true") {
				t.Errorf("%s: %s appends an event but does not set t.events (OnCommit would say no event)", f, fn.Name.Name)
			}
		}
	}
	if found < 4 {
		t.Errorf("found %d functions appending events, want at least 4 (AppendEvent, QueueAppendEvent, QueueAppendStoreEvent, QueueAppendEvents)", found)
	}
}

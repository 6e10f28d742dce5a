package daemon_test

import (
	"context"
	"sync"
	"testing"

	"github.com/paywatch/paywatch/daemon"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
)

// counted opens a second store on e's database whose statements are
// counted: take returns the SQL sent since the last take.
func counted(t *testing.T, e *paywatchtest.Env) (st *store.Store, take func() []string) {
	t.Helper()
	var mu sync.Mutex
	var sent []string
	st, err := store.OpenWith(context.Background(), e.Config.DatabaseURL, store.Options{Trace: func(sql string) {
		mu.Lock()
		sent = append(sent, sql)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st, func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := sent
		sent = nil
		return out
	}
}

// A daemon's start over a database that needs nothing derived (every
// network of the test's Env enabled, four of them derived, no store but
// the default, not on mainnet) sends three statements: the watched counts
// of all networks, the stores with their keys (one batch: the setups are
// built from what the reload read), and the free pre-derived counts of
// all derived networks; EnsureLookahead alone is that last one. It was 13:
// a count per network, the stores and keys read twice, a free count per
// derived network (issue 37 item 3: the simulator restarts the service in
// a history).
func TestADaemonStartReadsEachThingOnce(t *testing.T) {
	e := paywatchtest.New(t)
	st, take := counted(t, e)
	d, err := daemon.New(t.Context(), e.Config, daemon.Deps{Store: st, Sources: e.Sources(), Quotes: e.Daemon.Quotes(), Clock: e.Clock, StatusCache: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if sent := take(); len(sent) != 3 {
		t.Fatalf("a daemon's start sent %d statements, want 3:\n%q", len(sent), sent)
	}
	if err := d.Service().EnsureLookahead(t.Context()); err != nil {
		t.Fatal(err)
	}
	if sent := take(); len(sent) != 1 {
		t.Fatalf("EnsureLookahead with nothing to derive sent %d statements, want 1:\n%q", len(sent), sent)
	}
}

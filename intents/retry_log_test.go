package intents_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// countingHandler counts log records by message.
type countingHandler struct {
	mu   sync.Mutex
	seen map[string]int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen[r.Message]++
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

func (h *countingHandler) count(msg string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen[msg]
}

// A transaction retried on a serialization failure logs what it did once,
// after it committed, not once per attempt.
func TestARetriedTransactionLogsOnce(t *testing.T) {
	logs := &countingHandler{seen: map[string]int{}}
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin), paywatchtest.WithLog(slog.New(logs)))
	btc := payment.Bitcoin
	x := e.CreateIntent("order", "ORD-RL", "", "100.00", "BTC")
	e.Pay(x, payment.Native, paywatchtest.Units(x.AmountBaseUnits), "rl-1")
	e.Chains[btc].Mine(3)
	e.Sync(btc)
	if got := e.Intent(x.ID); got.Status != "paid" {
		t.Fatalf("status %s, want paid", got.Status)
	}
	// The next event written fails its transaction once with a
	// serialization failure, which InTx retries.
	ctx := context.Background()
	if _, err := e.Store.Pool().Exec(ctx, `
		CREATE SEQUENCE retry_once;
		CREATE FUNCTION fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF nextval('retry_once') = 1 THEN
				RAISE EXCEPTION 'forced retry' USING ERRCODE = '40001';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER fail_once BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION fail_once();`); err != nil {
		t.Fatal(err)
	}
	e.Chains[btc].Reorg(4, 1, false) // the paying transaction leaves the chain
	e.Sync(btc)
	if got := e.Intent(x.ID); got.Status == "paid" {
		t.Fatalf("status %s after the reorg", got.Status)
	}
	var fired int64
	if err := e.Store.Pool().QueryRow(ctx, `SELECT last_value FROM retry_once`).Scan(&fired); err != nil || fired < 2 {
		t.Fatalf("the trigger fired %d times (%v): no retry was forced", fired, err)
	}
	if n := logs.count("paid intent reverted by a reorg"); n != 1 {
		t.Fatalf("the reversal was logged %d times, want once", n)
	}
}

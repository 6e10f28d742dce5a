package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/store"
)

// errInjected is every fault the simulator injects into a node (fetch
// errors, outages): a scanner step may fail with it, never with anything
// else unless another injected cause explains it.
var errInjected = errors.New("sim: injected node fault")

// killMessage is the text of the failure the commit-time trigger raises.
const killMessage = "sim: injected failure before commit"

// Start is the clock's time at the start of every history.
var Start = time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)

// safetyDepth is the sim's safety depth by network (small, so that reorgs
// of depth safety_depth+1 are cheap to generate). Solana scans finalized
// slots: any reorg is deeper than its finality.
var safetyDepth = map[payment.Network]int64{
	payment.Bitcoin: 3, payment.Litecoin: 3, payment.Ethereum: 3, payment.Tron: 3, payment.Solana: 0,
}

// confirmations by method: small, so that histories reach paid quickly;
// 0 is the chain's finality (Tron solidified, Solana finalized).
var confirmations = map[payment.Method]int{
	payment.BTC: 2, payment.LTC: 2, payment.ETH: 2, payment.USDTERC20: 2, payment.USDCERC20: 2,
	payment.TRX: 0, payment.USDTTRC20: 0, payment.SOL: 0,
}

// parallel is the catch-up window of every scanner (so batches of up to
// this many blocks are applied in one transaction).
const parallel = 3

// rebuildWindow is the catch-up window of the rebuild's scanners: the
// largest validation accepts, as a scanner catching up after downtime
// scans (a chain of a history is scanned again in one or two batches).
const rebuildWindow = 64

// node is a scripted chain as a scanner sees it: a lagging node reports a
// tip below the chain's, and the reported tip is capped at the scanner's
// cursor + its window so that a catch-up never prefetches a window in the
// background (which would read the chain while the simulator changes it).
type node struct {
	f   *chainstest.Fake
	lag int
	cap chains.Height // -1: none
	// window is the catch-up window of the network's scanners (0:
	// parallel).
	window int
	// broadcast are the transactions that went through the mempool: a
	// lagging node still has those mined above its tip in its mempool.
	broadcast map[string]bool
	// read is the cursor the network's scanner read at its last step
	// (nil when that read failed: cappedKeys).
	read *chains.Cursor
	// race: the mempool is read from a node ahead of the one that answered
	// the tip (two backends, or a block mined between the two reads: issue
	// 9 item 5), so it lacks what blocks above the reported tip mined.
	race bool
}

var _ chains.Source = (*node)(nil)

// catchUpWindow is the window of the network's scanners.
func (n *node) catchUpWindow() int {
	if n.window > 0 {
		return n.window
	}
	return parallel
}

func (n *node) Tip(ctx context.Context) (chains.Height, error) {
	t, err := n.f.Tip(ctx)
	if err != nil {
		return 0, err
	}
	if chains.Height(n.lag) >= t {
		t = 1
	} else {
		t -= chains.Height(n.lag)
	}
	if n.cap >= 0 && t > n.cap {
		t = n.cap
	}
	// A node's tip is a block, never a skipped slot.
	chain := n.f.Chain()
	for t > 0 && t < chains.Height(len(chain)) && chain[t].Skipped {
		t--
	}
	return t, nil
}

// FinalizedHeight is consistent with the reported tip: a node that reports
// a lower tip reports a finalized height as much lower.
func (n *node) FinalizedHeight(ctx context.Context) (chains.Height, error) {
	fin, err := n.f.FinalizedHeight(ctx)
	if err != nil {
		return 0, err
	}
	t, err := n.Tip(ctx)
	if err != nil {
		return 0, err
	}
	behind := n.f.TipHeight() - t
	if fin < behind {
		return 0, nil
	}
	return min(fin-behind, t), nil
}

func (n *node) Block(ctx context.Context, h chains.Height, w chains.Watched) (chains.Block, error) {
	return n.f.Block(ctx, h, w)
}

// mempoolNode is a node with a mempool (Bitcoin, Litecoin).
type mempoolNode struct{ *node }

var _ chains.PendingSource = mempoolNode{}

// Pending is the mempool as of the reported tip: a lagging node has not
// seen the blocks above it, so what they mined from its mempool is still
// there.
func (n mempoolNode) Pending(ctx context.Context, w chains.Watched) ([]chains.Transfer, error) {
	out, err := n.f.Pending(ctx, w)
	if err != nil {
		return nil, err
	}
	if n.race {
		return out, nil
	}
	tip, err := n.Tip(ctx)
	if err != nil {
		return nil, err
	}
	chain := n.f.Chain()
	for h := tip + 1; h < chains.Height(len(chain)); h++ {
		for _, t := range chain[h].Transfers {
			if n.broadcast[t.TxID] && w.Contains(t.Key) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

func hasMempool(n payment.Network) bool { return n == payment.Bitcoin || n == payment.Litecoin }

// world is one worker's paywatch: one Env (one database) reused by every
// history it runs, reset in between.
type world struct {
	t testing.TB
	e *paywatchtest.Env
	// ours holds every watched key by network (hex), for the chain check.
	ours map[payment.Network]map[string]bool
	// resetConn runs the reset (prepareReset).
	resetConn *pgx.Conn
	// base is the config every history starts from (simConfig's).
	base histConfig
	// cur is the history running, whose OnCommit check the store calls.
	cur atomic.Pointer[run]
	// hasSettled: the schema stores a transfer's settled part (0019).
	hasSettled bool
	// sh: the stores' keys and pools (stores.go).
	sh shopWorld
}

// baseConfig is c's settings as a histConfig.
func baseConfig(c *config.Config) histConfig {
	hc := histConfig{deadline: c.Deadline.Duration, methods: map[payment.Method]methodConfig{}, openCap: c.Limits.OpenIntentsPerPayable}
	for _, m := range payment.Methods {
		mc := c.Methods[m.Method]
		hc.methods[m.Method] = methodConfig{confirmations: *mc.Confirmations, tolerance: mc.UnderpaymentTolerance, dust: mc.DustMin}
	}
	return hc
}

// decideAll decides the given intents' payables again in one transaction,
// as of the clock.
func (w *world) decideAll(ctx context.Context, ids []string) error {
	now := w.e.Clock.Now().UTC().Truncate(time.Microsecond)
	type all interface {
		RedecideAll(context.Context, *store.Tx, []string, time.Time) error
	}
	if d, ok := any(w.e.Service).(all); ok {
		return w.e.Store.InTx(ctx, func(tx *store.Tx) error { return d.RedecideAll(ctx, tx, ids, now) })
	}
	return w.e.Store.InTx(ctx, func(tx *store.Tx) error {
		for _, id := range ids {
			if err := w.e.Service.Redecide(ctx, tx, id, now); err != nil {
				return err
			}
		}
		return nil
	})
}

func simConfig(c *config.Config) {
	for _, n := range payment.Networks {
		nc := c.Networks[n]
		nc.SafetyDepth = safetyDepth[n]
		nc.Parallel = parallel
		// Enough free pre-derived addresses that no history derives more:
		// the background replenisher then never changes which address an
		// intent gets.
		nc.Gap = 40
	}
	for _, m := range payment.Methods {
		k := confirmations[m.Method]
		c.Methods[m.Method].Confirmations = &k
	}
}

func newWorld(t testing.TB) *world {
	e := paywatchtest.New(t, paywatchtest.WithConfig(simConfig))
	w := &world{t: t, e: e}
	ctx := context.Background()
	// The commit-time kill: a deferred constraint trigger on the cursor
	// fails the transaction at COMMIT, after every statement of the batch
	// ran, when the network is armed.
	_, err := e.Store.Pool().Exec(ctx, `
CREATE TABLE IF NOT EXISTS sim_faults (network TEXT PRIMARY KEY, batch_only BOOLEAN NOT NULL);
CREATE OR REPLACE FUNCTION sim_fail_commit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM sim_faults f WHERE f.network = NEW.network AND (NOT f.batch_only OR NEW.height >= OLD.height + 2)) THEN
        RAISE EXCEPTION '`+killMessage+`';
    END IF;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS sim_fail_commit ON cursors;
CREATE CONSTRAINT TRIGGER sim_fail_commit AFTER UPDATE ON cursors DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION sim_fail_commit();`)
	if err != nil {
		t.Fatalf("sim trigger: %v", err)
	}
	// Every statement takes its generic plan, made once per connection:
	// PostgreSQL kept planning the store's transfer reads again at each
	// call (a custom plan, 0.3 ms, where running one takes 0.05 ms), a
	// third of the planning left in a history. The plans change no result.
	if _, err := e.Store.Pool().Exec(ctx, `DO $$ BEGIN
		EXECUTE format('ALTER DATABASE %I SET plan_cache_mode = force_generic_plan', current_database()); END $$`); err != nil {
		t.Fatalf("plan cache mode: %v", err)
	}
	e.Store.Pool().Reset() // the connections open again with it
	e.Scanners = map[payment.Network]*chains.Scanner{}
	w.base = baseConfig(e.Config)
	w.initShops(t)
	e.Store.OnCommit(func(events bool) {
		if r := w.cur.Load(); r != nil {
			r.onCommit(events)
		}
	})
	t.Cleanup(func() { e.Store.OnCommit(nil) })
	if err := e.Store.Pool().QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns
		WHERE table_name = 'transfers' AND column_name = 'settled')`).Scan(&w.hasSettled); err != nil {
		t.Fatalf("schema: %v", err)
	}
	return w
}

// keep are the tables a reset leaves: API keys, the derived and imported
// addresses and their counters, the schema's bookkeeping, and the queue of
// free addresses (the addresses the history took go back into it).
var keep = map[string]bool{"schema_migrations": true, "api_keys": true, "addresses": true, "derivation_counters": true, "free_addresses": true,
	"stores": true, "store_keys": true}

// prepareReset makes the reset: a function, sim_reset, that empties every
// table but those kept and frees every address again, and the connection
// it runs on. That connection is in session_replication_role replica for
// its whole session (no trigger and no foreign key checked while every
// table empties): setting the role makes PostgreSQL drop every plan the
// connection has cached, so it is set once, on a connection of its own.
// On a pool connection every statement of the next history was planned
// again (14 ms of PostgreSQL's time a history, the costliest prepared
// statements 2 ms a plan: pg_stat_statements); set and reset at each
// reset, the function's forty statements were planned again each time.
func (w *world) prepareReset(ctx context.Context) error {
	rows, err := w.e.Store.Pool().Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("CREATE OR REPLACE FUNCTION sim_reset() RETURNS void LANGUAGE plpgsql AS $$ BEGIN\n")
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return err
		}
		if !keep[s] {
			fmt.Fprintf(&b, "DELETE FROM %q;\n", s)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// Every address is free again: those the history took go back in the
	// queue (a claim deletes a row of it; nothing else changes one), which
	// then holds a row per address, as the addresses' insert trigger wrote
	// it, as if it had been emptied and filled again (and at a handful of
	// rows a history rather than all of them). The lane and order are the
	// insert trigger's (free_addresses_add).
	b.WriteString(`INSERT INTO free_addresses (network, lane, ord, key)
		SELECT a.network, CASE WHEN a.derivation_index IS NOT NULL THEN a.source
				WHEN a.store_id = 'default' THEN '' ELSE 'pool:' || a.store_id END,
			coalesce(a.derivation_index, a.seq), a.key
		FROM addresses a WHERE NOT EXISTS (SELECT 1 FROM free_addresses f WHERE f.network = a.network AND f.key = a.key);
END $$`)
	if _, err := w.e.Store.Pool().Exec(ctx, b.String()); err != nil {
		return fmt.Errorf("reset function: %w", err)
	}
	c, err := pgx.Connect(ctx, w.e.Config.DatabaseURL)
	if err != nil {
		return fmt.Errorf("reset connection: %w", err)
	}
	w.t.Cleanup(func() { _ = c.Close(context.Background()) })
	if _, err := c.Exec(ctx, `SET session_replication_role = replica`); err != nil {
		return fmt.Errorf("reset connection: %w", err)
	}
	w.resetConn = c
	return nil
}

// reset empties every table a history writes (a fresh database but for the
// addresses, which are freed) and sets the clock to Start.
func (w *world) reset() error {
	ctx := context.Background()
	pool := w.e.Store.Pool()
	if w.resetConn == nil {
		if err := w.prepareReset(ctx); err != nil {
			return err
		}
	}
	if _, err := w.resetConn.Exec(ctx, `SELECT sim_reset()`); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	w.e.Clock.Set(Start)
	if w.ours == nil {
		w.ours = map[payment.Network]map[string]bool{}
		rows, err := pool.Query(ctx, `SELECT network, encode(key, 'hex') FROM addresses`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var n, k string
			if err := rows.Scan(&n, &k); err != nil {
				return err
			}
			if w.ours[payment.Network(n)] == nil {
				w.ours[payment.Network(n)] = map[string]bool{}
			}
			w.ours[payment.Network(n)][k] = true
		}
		rows.Close()
	}
	return nil
}

// do sends an API request straight to the handlers and returns the status
// and body.
func (w *world) do(method, path, scope string, body any, headers ...string) (int, []byte) {
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	case string:
		raw = []byte(b)
	default:
		raw, _ = json.Marshal(b)
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(raw))
	if scope != "" {
		req.Header.Set("Authorization", "Bearer "+w.e.Keys[scope])
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	w.e.API.ServeHTTP(rec, req)
	if rec.Code == http.StatusInternalServerError {
		if r := w.cur.Load(); r != nil {
			r.violate(Invariants[invNo500], "%s %s -> %d %s", method, path, rec.Code, shorten(rec.Body.String()))
		}
	}
	return rec.Code, rec.Body.Bytes()
}

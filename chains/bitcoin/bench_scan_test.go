package bitcoin_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// BenchmarkCatchUp measures a catch-up of 1,000 btcd regtest blocks through
// chains.Scanner and the real Sink (PostgreSQL), with 300 watched addresses
// of which 20 have intents paid along the way and 10 receive payments
// without an intent, against a loop that only fetches the same raw blocks
// (Client.RawBlock, one after the other). It reports both throughputs and
// their ratio (target >= 0.8). Each iteration mines 1,000 fresh blocks on a
// fresh node and scans them into a fresh database; run it with
// -benchtime=1x. PAYWATCH_BENCH_PARALLEL overrides networks.bitcoin.parallel.
func BenchmarkCatchUp(b *testing.B) {
	const blocks, watched, paid, unknown = 1000, 300, 20, 10
	parallel := 0
	if v := os.Getenv("PAYWATCH_BENCH_PARALLEL"); v != "" {
		parallel, _ = strconv.Atoi(v)
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		node := startBtcd(b)
		src := newClient(b, payment.Bitcoin, node.node.RPCURL, true)
		e := paywatchtest.New(b, paywatchtest.Only(payment.Bitcoin), paywatchtest.WithSource(payment.Bitcoin, src),
			paywatchtest.WithConfig(func(c *config.Config) {
				c.Networks["bitcoin"].Gap = watched
				if parallel > 0 {
					c.Networks["bitcoin"].Parallel = parallel
				}
			}))
		var vs []views.Intent
		for j := 0; j < paid; j++ {
			vs = append(vs, e.CreateIntent("order", fmt.Sprintf("BENCH-%d", j), "cust-1", "10.00", "BTC"))
		}
		var free []string
		rows, err := e.Store.Pool().Query(context.Background(), `SELECT address FROM addresses
			WHERE network = 'bitcoin' AND key IN (SELECT key FROM free_addresses WHERE network = 'bitcoin') ORDER BY derivation_index DESC LIMIT $1`, unknown)
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
			var a string
			if err := rows.Scan(&a); err != nil {
				b.Fatal(err)
			}
			free = append(free, a)
		}
		rows.Close()
		if n := e.Counts()["assigned_addresses"]; n != paid {
			b.Fatalf("%d addresses assigned", n)
		}
		from, _ := node.node.Tip(nodeCtx(b))
		chunk := blocks / (paid + unknown)
		for j := 0; j < paid+unknown; j++ {
			if j < paid {
				amount, _ := strconv.ParseInt(vs[j].AmountBaseUnits, 10, 64)
				node.Pay(b, map[string]int64{vs[j].Address: amount})
			} else {
				node.Pay(b, map[string]int64{free[j-paid]: 50_000})
			}
			node.Mine(b, chunk)
		}
		if rest := blocks - chunk*(paid+unknown); rest > 0 {
			node.Mine(b, rest)
		}
		to := from + blocks

		fetch := func() time.Duration {
			start := time.Now()
			for h := from + 1; h <= to; h++ {
				if _, err := src.RawBlock(context.Background(), chains.Height(h)); err != nil {
					b.Fatal(err)
				}
			}
			return time.Since(start)
		}
		fetch1 := fetch()

		b.StartTimer()
		start := time.Now()
		e.Sync(payment.Bitcoin)
		scan := time.Since(start)
		b.StopTimer()

		fetch2 := fetch()
		best := min(fetch1, fetch2)
		c, err := e.Store.GetCursor(context.Background(), "bitcoin")
		if err != nil || c.Height != to {
			b.Fatalf("cursor %d, want %d: %v", c.Height, to, err)
		}
		for _, v := range vs {
			if got := e.Intent(v.ID); got.Status != "paid" {
				b.Fatalf("intent %s: %s", v.ID, got.Status)
			}
		}
		if n := e.Counts()["transfers"]; n != paid+unknown {
			b.Fatalf("%d transfers, want %d", n, paid+unknown)
		}
		scanRate := float64(blocks) / scan.Seconds()
		fetchRate := float64(blocks) / best.Seconds()
		b.ReportMetric(scanRate, "scan-blocks/s")
		b.ReportMetric(fetchRate, "fetch-blocks/s")
		b.ReportMetric(scanRate/fetchRate, "ratio")
		b.StartTimer()
	}
}

package daemon_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// wallClock lists the files (outside cmd/, sim/ and devnet/, tests aside)
// that may read or wait on the wall clock directly, each with its reason.
// Everything that decides, records or schedules something a test must
// control takes a clock.Clock instead (nil: the wall clock, through
// clock.Or).
var wallClock = map[string]string{
	"clock/clock.go":                             "the real clock itself",
	"api/eventfeed.go":                           "the event feed's poll: a backstop to NOTIFY, pacing reads of the database",
	"checkout/hub.go":                            "the live pages' progress ticks: pacing reads for open connections",
	"checkout/live.go":                           "a stream's keep-alives, its longest life and write deadlines: connection I/O",
	"config/resolve.go":                          "checking at load that a schedule fires at all from now",
	"console/operator.go":                        "the lag chart's sampling of network lag",
	"chains/wsnotify.go":                         "websocket pings, read and write deadlines: connection I/O",
	"chains/bitcoin/mempool_peek.go":             "the mempool peek's pacing of node reads",
	"chains/tron/client.go":                      "a node call's duration, for its log line",
	"daemon/httpmetrics.go":                      "request latency metrics",
	"docs/webhooks/receiver.go":                  "an example receiver (not built into paywatch) checking a signature's timestamp against its own clock",
	"daemon/metrics.go":                          "scan latency metrics",
	"daemon/opsmetrics.go":                       "delivery latency metrics",
	"daemon/stores.go":                           "the stores' reload: a poll of two small tables for stores and keys added while running",
	"daemon/poolmetrics.go":                      "the address pool metrics' read timeout",
	"ingest/leader.go":                           "a standby's pause between tries for the lease: database I/O",
	"paywatchtest/critical.go":                   "the test environment's waits for a critical state",
	"rates/binance.go":                           "when a price was fetched from an outside source",
	"rates/coinbase.go":                          "when a price was fetched from an outside source",
	"rates/coingecko.go":                         "when a price was fetched from an outside source",
	"rates/kraken.go":                            "when a price was fetched from an outside source",
	"rates/static.go":                            "when a price was read, like a fetched one",
	"reconcile/view.go":                          "the node call budget's pacing",
	"store/failover.go":                          "the failover probe and its retries: database I/O",
	"store/notify.go":                            "LISTEN reconnection backoff: database I/O",
	"store/store.go":                             "retries of a lost connection: database I/O",
	"chains/endpoints/endpointstest/faultmix.go": "a test helper's pause between polls of real nodes' answers",
	"chains/endpoints/endpointstest/scanner.go":  "a test helper's times of detection and its pause between polls",
}

// Only the listed code reads the wall clock: a time.Now, time.After or
// ticker anywhere else is a clock a test cannot move (the deadline sweep,
// the quote recorder and the reconciler's schedule each once were one).
func TestOnlyListedCodeReadsTheWallClock(t *testing.T) {
	root := moduleRoot(t)
	readers := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case rel == "cmd", rel == "sim", rel == "devnet", rel == "testdata", strings.HasSuffix(rel, "/testdata"),
				strings.HasPrefix(d.Name(), ".") && rel != ".", d.Name() == "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "time" {
				switch sel.Sel.Name {
				case "Now", "Since", "Until", "After", "AfterFunc", "NewTicker", "NewTimer", "Tick", "Sleep":
					readers[rel] = append(readers[rel], "time."+sel.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for f := range readers {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		if _, ok := wallClock[f]; !ok && !strings.Contains(f, "fake/") && !strings.HasPrefix(f, "chains/chainstest/") {
			t.Errorf("%s reads the wall clock (%s): take a clock.Clock, or list the file with its reason", f, strings.Join(readers[f], ", "))
		}
	}
	for f := range wallClock {
		if _, ok := readers[f]; !ok {
			t.Errorf("%s is listed but reads no wall clock: drop it from the list", f)
		}
	}
}

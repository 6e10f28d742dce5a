package daemon_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// layers places every package of the module (as docs/developing.md's "Code
// layout" section lists them): a package's non-test files import only
// packages of a lower layer. A new package must be placed here.
var layers = map[string]int{
	// Vocabulary and small tools.
	"payment": 0, "clock": 0, "clientaddr": 0, "logs": 0, "contracts": 0, "devnet": 0, "devnet/faultyproxy": 0,
	// docs/webhooks/receiver.go, an example receiver (//go:build ignore).
	"docs/webhooks": 0,
	// Pure pieces: addresses, the matcher, rates, the chain scanner.
	"addresses": 1, "matcher": 1, "rates": 1, "chains": 1, "chains/endpoints": 1,
	"devnet/devnettest": 1, "devnet/ethdev": 1, "devnet/walletjs": 1,
	// Config, the node clients, the scripted chain.
	"config": 2, "chains/endpoints/endpointstest": 2, "chains/bitcoin": 2, "chains/evm": 2, "chains/solana": 2, "chains/tron": 2, "chains/chainstest": 2,
	// The database.
	"store": 3, "chains/nodes": 3, "chains/solana/solanafake": 3, "chains/tron/tronfake": 3,
	"views": 4,
	// The payment core.
	"intents": 5,
	// Services beside the core.
	"finance": 6, "availability": 6, "webhooks": 6, "reconcile": 6, "verify": 6,
	"ingest": 7, "reports": 7,
	// The edges: HTTP.
	"api": 8, "checkout": 8,
	"console": 9, "api/openapitest": 9,
	// The composition root.
	"daemon": 10,
	// What runs or tests the daemon.
	"paywatchtest": 11,
	"cmd/paywatch": 12, "cmd/paywatch-sandbox": 12, "cmd/paywatch-bench": 12, "cmd/paywatch-latency": 12,
	"cmd/paywatch-load": 12, "sim": 12, "paywatchtest/reconciletest": 12,
}

const module = "github.com/paywatch/paywatch/"

// Every import points down: no package imports one of its own layer or
// above (tests aside), so the payment core knows nothing of the HTTP API,
// the daemon or the test environment that wire it.
func TestLayering(t *testing.T) {
	root := moduleRoot(t)
	imports := map[string][]string{} // package → module packages its non-test files import
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		if _, ok := imports[pkg]; !ok {
			imports[pkg] = nil
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if strings.HasPrefix(p, module) {
				imports[pkg] = append(imports[pkg], strings.TrimPrefix(p, module))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		lp, ok := layers[p]
		if !ok {
			t.Errorf("package %s has no layer: place it in layers (and in docs/developing.md's code layout)", p)
			continue
		}
		for _, q := range imports[p] {
			if lq, ok := layers[q]; ok && lq >= lp {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports point down", p, lp, q, lq)
			}
		}
	}
	for p := range layers {
		if _, ok := imports[p]; !ok {
			t.Errorf("layers names %s, which is not a package of the module", p)
		}
	}
}

// moduleRoot is the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}

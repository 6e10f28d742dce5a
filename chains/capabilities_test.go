package chains_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/bitcoin"
	"github.com/paywatch/paywatch/chains/chainstest"
	"github.com/paywatch/paywatch/chains/evm"
	"github.com/paywatch/paywatch/chains/solana"
	"github.com/paywatch/paywatch/chains/tron"
	"github.com/paywatch/paywatch/ingest"
)

// capabilities are the optional Source capabilities of capabilities.go.
var capabilities = map[string]reflect.Type{
	"HeaderSource":    reflect.TypeFor[chains.HeaderSource](),
	"ChainMembership": reflect.TypeFor[chains.ChainMembership](),
	"PendingSource":   reflect.TypeFor[chains.PendingSource](),
	"BalanceChecker":  reflect.TypeFor[chains.BalanceChecker](),
	"BalanceNeed":     reflect.TypeFor[chains.BalanceNeed](),
	"SparseSource":    reflect.TypeFor[chains.SparseSource](),
	"SparseMode":      reflect.TypeFor[chains.SparseMode](),
	"Notifier":        reflect.TypeFor[chains.Notifier](),
	"ChainVerifier":   reflect.TypeFor[chains.ChainVerifier](),
}

// TestSourceCapabilities states which optional capabilities each source has:
// the scanner finds them by type assertion, so a method renamed or a
// signature changed would otherwise drop one silently (a walk-back reading
// whole blocks, a mempool never read, ETH paid by contracts never
// reconciled). A capability gained is listed here on purpose too.
func TestSourceCapabilities(t *testing.T) {
	for _, c := range []struct {
		name string
		src  chains.Source
		want []string
	}{
		{"bitcoin.Client", (*bitcoin.Client)(nil), []string{"ChainMembership", "ChainVerifier", "HeaderSource", "Notifier", "PendingSource"}},
		{"evm.Client", (*evm.Client)(nil), []string{"BalanceChecker", "BalanceNeed", "ChainVerifier", "HeaderSource", "Notifier"}},
		{"solana.Client", (*solana.Client)(nil), []string{"ChainVerifier", "HeaderSource", "Notifier"}},
		{"solana.ModeSource", (*solana.ModeSource)(nil), []string{"ChainVerifier", "HeaderSource", "Notifier", "SparseMode", "SparseSource"}},
		{"tron.Client", (*tron.Client)(nil), []string{"ChainVerifier", "HeaderSource"}},
		{"chainstest.Fake", (*chainstest.Fake)(nil), []string{"HeaderSource", "PendingSource"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			typ := reflect.TypeOf(c.src)
			var got []string
			for name, iface := range capabilities {
				if typ.Implements(iface) {
					got = append(got, name)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Fatalf("%s has capabilities %v, want %v", c.name, got, c.want)
			}
		})
	}
}

// TestServiceFillsEverySinkRole: the Service is every role a scanner writes
// to, the optional ones included; a nil optional role would silently take
// its fallback (one transaction per block, no balance reconciliation, a
// lagging node's mempool dropped).
func TestServiceFillsEverySinkRole(t *testing.T) {
	sinks := reflect.ValueOf((*ingest.Sink)(nil).ScannerSinks())
	for i := range sinks.NumField() {
		if sinks.Field(i).IsNil() {
			t.Errorf("ScannerSinks leaves %s nil", sinks.Type().Field(i).Name)
		}
	}
}

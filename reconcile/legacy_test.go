package reconcile

import (
	"math/big"
	"testing"

	"github.com/paywatch/paywatch/store"
)

// A token transfer stored under its block log index before migration 0025
// is the node's credit under the tx-local key: no finding (issue 32 item 1).
func TestCompareAdoptsLegacyTokenKeys(t *testing.T) {
	h := int64(50)
	ours := []store.Transfer{{TxID: "0xaa", Index: store.LegacyIndexBase + 12, Asset: "USDT", AddressKey: []byte("A"), Amount: big.NewInt(5), BlockHeight: &h}}
	credits := []Credit{{TxID: "0xaa", Index: 0, Asset: "USDT", Key: []byte("A"), Amount: big.NewInt(5), Height: 50}}
	if f := compare(credits, ours); len(f) != 0 {
		t.Fatalf("findings %+v, want none", f)
	}
	// Another address's credit of the transaction is still missing.
	credits = append(credits, Credit{TxID: "0xaa", Index: 1, Asset: "USDT", Key: []byte("B"), Amount: big.NewInt(5), Height: 50})
	if f := compare(credits, ours); len(f) != 1 || f[0].Kind != store.FindingMissing || f[0].Index != 1 {
		t.Fatalf("findings %+v, want log 1 missing", f)
	}
}

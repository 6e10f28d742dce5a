package reports

import (
	"bytes"
	"encoding/csv"
	"math/big"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// The CSV names the asset as the API does (ETH, not the stored "native"),
// writes an ETH native transfer's index -1 as the number it is (the formula
// guard is for text cells only), and still guards text (issue 36 item 10).
func TestReconciliationCSVNumbersAndAssetNames(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	h := int64(7)
	tr := store.Transfer{ID: "tr_1", Network: "ethereum", TxID: "0xabc", Index: -1, Asset: string(payment.Native),
		Address: "0x01", Amount: big.NewInt(1_000_000_000_000_000), FirstSeenAt: now, BlockHeight: &h,
		Status: payment.TransferConfirmed, Classification: payment.UnknownAddress}
	row, _, _, _ := reconRow(store.ReconRow{Transfer: tr, PayableRef: "=HYPERLINK(\"x\")"})
	var buf bytes.Buffer
	if err := (Reconciliation{Rows: []ReconRow{row}}).WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("%v: %q", err, recs)
	}
	got := map[string]string{}
	for i, k := range recs[0] {
		got[k] = recs[1][i]
	}
	for k, want := range map[string]string{"asset": "ETH", "method": "ETH", "index": "-1", "amount": "0.001000000000000000",
		"payable_reference": "'=HYPERLINK(\"x\")"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
}

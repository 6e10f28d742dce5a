package store_test

import (
	"math/big"
	"testing"

	"github.com/paywatch/paywatch/store"
)

// Issue 33 item 5: a transfer's verification by a second source is
// written only while the transfer is in the block and of the amount that
// was checked, counted once per change of state, kept when the same block
// is seen again (a rescan), and cleared when the transfer is seen in
// another block or with other content; the endpoint that served the
// block is kept with it.
func TestVerificationFollowsTheBlockAndContent(t *testing.T) {
	tx, ctx := inTx(t)
	h := int64(100)
	tr := store.Transfer{ID: "tr_v", Network: "bitcoin", TxID: "aa", Index: 1, Asset: "native", Address: "a", AddressKey: []byte("a"),
		Amount: big.NewInt(5), BlockHeight: &h, BlockHash: "bb", FirstSeenAt: now, Status: "confirming", ConfirmationsRequired: 2,
		Classification: "partial", CreatedAt: now, ScannedBy: "own"}
	if _, _, err := tx.UpsertTransfer(ctx, tr); err != nil {
		t.Fatal(err)
	}
	set := func(hash, amount, state string) (bool, bool) {
		t.Helper()
		wrote, changed, err := tx.SetVerification(ctx, "tr_v", hash, amount, store.Verification{State: state, Endpoint: "checker", Detail: "d"}, now)
		if err != nil {
			t.Fatal(err)
		}
		return wrote, changed
	}
	get := func() store.Transfer {
		t.Helper()
		got, err := tx.GetTransfer(ctx, "tr_v")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := get(); got.ScannedBy != "own" || got.Verify.State != "" {
		t.Fatalf("fresh: scanned_by %q, verify %+v", got.ScannedBy, got.Verify)
	}
	if wrote, changed := set("bb", "5", store.VerifyDisagrees); !wrote || !changed {
		t.Fatalf("first check: wrote %v changed %v", wrote, changed)
	}
	if wrote, changed := set("bb", "5", store.VerifyDisagrees); !wrote || changed {
		t.Fatalf("same state again: wrote %v changed %v, want a write that changes nothing", wrote, changed)
	}
	if wrote, _ := set("xx", "5", store.VerifyVerified); wrote {
		t.Fatal("a check of another block was written")
	}
	if wrote, _ := set("bb", "6", store.VerifyVerified); wrote {
		t.Fatal("a check of another amount was written")
	}
	if wrote, changed := set("bb", "5", store.VerifyVerified); !wrote || !changed {
		t.Fatalf("verified: wrote %v changed %v", wrote, changed)
	}
	if got := get(); !got.Verify.Verified() || got.Verify.Endpoint != "checker" || got.Verify.CheckedAt == nil {
		t.Fatalf("after the check: %+v", got.Verify)
	}
	// A rescan of the same block keeps it.
	tr.ID = "tr_other"
	if _, _, err := tx.UpsertTransfer(ctx, tr); err != nil {
		t.Fatal(err)
	}
	if got := get(); !got.Verify.Verified() {
		t.Fatalf("the same block seen again lost the verification: %+v", got.Verify)
	}
	// Another block (a reorg): cleared, and the new block's endpoint kept.
	tr.BlockHash, tr.ScannedBy = "cc", "rented"
	if _, _, err := tx.UpsertTransfer(ctx, tr); err != nil {
		t.Fatal(err)
	}
	if got := get(); got.Verify.Verified() || got.ScannedBy != "rented" {
		t.Fatalf("in another block: verify %+v, scanned_by %q", got.Verify, got.ScannedBy)
	}
	set("cc", "5", store.VerifyVerified)
	// Other content in the same block (a re-execution): cleared.
	tr.Amount = big.NewInt(6)
	if _, _, err := tx.UpsertTransfer(ctx, tr); err != nil {
		t.Fatal(err)
	}
	if got := get(); got.Verify.Verified() {
		t.Fatalf("with other content: %+v", got.Verify)
	}
}

package solana

import (
	"bytes"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/btcsuite/btcd/btcutil/base58"

	"github.com/paywatch/paywatch/chains"
)

// maxLamports: balances are u64 lamports, so no credit can be larger.
var maxLamports = new(big.Int).SetUint64(^uint64(0))

// checkSolanaContained fails unless every transfer credits a key the
// answer names (base58) by a positive amount a u64 balance can hold.
func checkSolanaContained(t *testing.T, body []byte, trs []chains.Transfer) {
	t.Helper()
	for _, tr := range trs {
		if tr.Amount == nil || tr.Amount.Sign() <= 0 || tr.Amount.Cmp(maxLamports) > 0 {
			t.Fatalf("transfer %s: amount %v outside (0, 2^64)", tr.TxID, tr.Amount)
		}
		if len(tr.Key) != 32 || !bytes.Contains(body, []byte(base58.Encode(tr.Key))) {
			t.Fatalf("transfer %s: key %x is not named in the answer", tr.TxID, tr.Key)
		}
		if tr.TxID == "" || !bytes.Contains(body, []byte(tr.TxID)) {
			t.Fatalf("transfer %q: signature not in the answer", tr.TxID)
		}
	}
}

// FuzzSolanaBlockContained: beyond FuzzDecoderAgreement (two decoders
// agree), every credit getBlock reports is to a key the answer names, by an
// amount a balance can hold.
func FuzzSolanaBlockContained(f *testing.F) {
	for _, seed := range decoderSeeds(f)[1:] {
		f.Add(seed)
	}
	w := watch(f, devnetReceiver, "11111111111111111111111111111111", "8ns4WyfWQCWkNAHDyRPnT6J4yqSKZL6GBWTWoXkwK4Jr", "FDUGdV6bjhvw5gbirXCvqbTSWK9999kcrZcrHoCQzXJK")
	f.Fuzz(func(t *testing.T, body []byte) {
		b, err := decodeBlock(9, body, w)
		if err != nil {
			return
		}
		checkSolanaContained(t, body, b.Transfers)
	})
}

// FuzzSolanaTransaction decodes getTransaction answers (the address-mode
// poller's source) with the same containment properties.
func FuzzSolanaTransaction(f *testing.F) {
	for _, name := range []string{"metamask_devnet_native_sol_transfer_2qfNzGs1.json", "metamask_mainnet_failed_v0_tx_58FymkjJ.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	w := watch(f, devnetReceiver, "11111111111111111111111111111111", "FDUGdV6bjhvw5gbirXCvqbTSWK9999kcrZcrHoCQzXJK")
	f.Fuzz(func(t *testing.T, body []byte) {
		out, _, found, err := decodeTransaction("sig", body, w)
		if err != nil || !found {
			return
		}
		trs := make([]chains.Transfer, len(out))
		for i, st := range out {
			trs[i] = st.Transfer
		}
		checkSolanaContained(t, body, trs)
	})
}

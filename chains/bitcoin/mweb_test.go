package bitcoin

import (
	"bytes"
	"encoding/hex"
	"testing"

	ltcwire "github.com/ltcsuite/ltcd/wire"
)

// lastTxIfHogEx decodes a raw Litecoin block and returns its HogEx when the
// block carries one together with an MWEB block.
func lastTxIfHogEx(t *testing.T, raw []byte) *ltcwire.MsgTx {
	t.Helper()
	var mb ltcwire.MsgBlock
	if err := mb.Deserialize(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	last := mb.Transactions[len(mb.Transactions)-1]
	if !last.IsHogEx || mb.MwebHeader == nil {
		return nil
	}
	return last
}

// pureMWEBTx reports whether a raw Litecoin transaction is MWEB-only: MWEB
// data and no canonical inputs or outputs (its txid is its kernel's hash).
func pureMWEBTx(t *testing.T, rawHex string) bool {
	t.Helper()
	raw, err := hex.DecodeString(rawHex)
	if err != nil {
		t.Fatal(err)
	}
	var tx ltcwire.MsgTx
	if err := tx.Deserialize(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	return tx.Mweb != nil && len(tx.TxIn) == 0 && len(tx.TxOut) == 0
}

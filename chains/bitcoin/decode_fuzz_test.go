package bitcoin

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	btcchaincfg "github.com/btcsuite/btcd/chaincfg"
	btcwire "github.com/btcsuite/btcd/wire"
	ltcchaincfg "github.com/ltcsuite/ltcd/chaincfg"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// everything watches every script, so a decoder reports every output.
type everything struct{}

func (everything) Contains([]byte) bool { return true }

var (
	btcFuzzCodec = btcCodec{params: &btcchaincfg.RegressionNetParams}
	ltcFuzzCodec = ltcCodec{params: &ltcchaincfg.TestNet4Params}
)

// hexSeeds returns the decoded contents of testdata files matching glob.
func hexSeeds(f *testing.F, glob string) [][]byte {
	f.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", glob))
	if err != nil || len(names) == 0 {
		f.Fatalf("no seeds for %s: %v", glob, err)
	}
	var out [][]byte
	for _, n := range names {
		if strings.HasSuffix(n, ".source.txt") {
			continue
		}
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		raw, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil {
			f.Fatalf("%s: %v", n, err)
		}
		out = append(out, raw)
	}
	return out
}

// verboseTxHexes returns the "hex" of every transaction of a getblock
// verbosity 2 capture.
func verboseTxHexes(f *testing.F, name string) [][]byte {
	f.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		f.Fatal(err)
	}
	var blk verboseBlock
	if err := json.Unmarshal(b, &blk); err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for _, tx := range blk.Tx {
		raw, err := hex.DecodeString(tx.Hex)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, raw)
	}
	return out
}

// btcBlockOf serializes a block of the given raw transactions under the
// genesis header (the decoder does not check proof of work or the merkle
// root: the node did).
func btcBlockOf(f *testing.F, txs [][]byte) []byte {
	f.Helper()
	mb := btcwire.MsgBlock{Header: btcchaincfg.MainNetParams.GenesisBlock.Header}
	for _, raw := range txs {
		var tx btcwire.MsgTx
		if err := tx.Deserialize(bytes.NewReader(raw)); err != nil {
			f.Fatal(err)
		}
		mb.Transactions = append(mb.Transactions, &tx)
	}
	var buf bytes.Buffer
	if err := mb.Serialize(&buf); err != nil {
		f.Fatal(err)
	}
	return buf.Bytes()
}

// checkContained fails unless every transfer is an output that raw
// literally holds (value, script length, script), with an amount within
// the asset's supply: a decoder never invents a payment.
func checkContained(t *testing.T, raw []byte, trs []chains.Transfer, supply int64) {
	t.Helper()
	for _, tr := range trs {
		if tr.Amount == nil || tr.Amount.Sign() < 0 || tr.Amount.Cmp(big.NewInt(supply)) > 0 {
			t.Fatalf("output %s:%d: amount %v outside [0, %d]", tr.TxID, tr.Index, tr.Amount, supply)
		}
		if len(tr.TxID) != 64 || tr.Index < 0 || tr.Asset != payment.Native {
			t.Fatalf("malformed transfer %+v", tr)
		}
		var want bytes.Buffer
		var v [8]byte
		binary.LittleEndian.PutUint64(v[:], tr.Amount.Uint64())
		want.Write(v[:])
		if err := btcwire.WriteVarInt(&want, 0, uint64(len(tr.Key))); err != nil {
			t.Fatal(err)
		}
		want.Write(tr.Key)
		if !bytes.Contains(raw, want.Bytes()) {
			t.Fatalf("output %s:%d (%v to %x) is not in the input", tr.TxID, tr.Index, tr.Amount, tr.Key)
		}
	}
}

func fuzzBlock(f *testing.F, c codec, supply int64, seeds [][]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := recovered(func() (decodedBlock, error) { return c.block(raw, everything{}) })
		if err != nil {
			return
		}
		if len(d.hash) != 64 || len(d.parent) != 64 {
			t.Fatalf("hash %q parent %q", d.hash, d.parent)
		}
		if len(d.transfers) > 0 && d.txCount == 0 {
			t.Fatalf("%d transfers in a block without transactions", len(d.transfers))
		}
		checkContained(t, raw, d.transfers, supply)
	})
}

func fuzzTx(f *testing.F, c codec, supply int64, seeds [][]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := recovered(func() (mempoolTx, error) { return c.tx(raw) })
		if err != nil {
			return
		}
		var trs []chains.Transfer
		for i, o := range m.outs {
			tr, err := transfer(c, m.txid, i, o.script, o.value)
			if err != nil {
				continue // refused: what Pending does with it (an error)
			}
			trs = append(trs, tr)
		}
		checkContained(t, raw, trs, supply)
	})
}

// FuzzBitcoinBlock decodes raw Bitcoin blocks (getblock <hash> 0) with the
// production codec: every reported output is in the input, within supply.
func FuzzBitcoinBlock(f *testing.F) {
	seeds := append(hexSeeds(f, "btcd_docs_getblock_v0_genesis.hex.txt"), btcBlockOf(f, verboseTxHexes(f, "mainnet_getblock_v2_766390.json")))
	fuzzBlock(f, btcFuzzCodec, maxSatoshi[payment.Bitcoin], seeds)
}

// FuzzLitecoinBlock is FuzzBitcoinBlock for Litecoin blocks with HogEx and
// MWEB data (ltcd's decoder, which can panic on malformed MWEB).
func FuzzLitecoinBlock(f *testing.F) {
	fuzzBlock(f, ltcFuzzCodec, maxSatoshi[payment.Litecoin], hexSeeds(f, "testnet4_raw_block_*.hex.txt"))
}

// FuzzBitcoinTx decodes mempool transactions (getrawtransaction <txid> 0).
func FuzzBitcoinTx(f *testing.F) {
	fuzzTx(f, btcFuzzCodec, maxSatoshi[payment.Bitcoin], verboseTxHexes(f, "mainnet_getblock_v2_766390.json"))
}

// FuzzLitecoinTx decodes Litecoin mempool transactions, MWEB ones included.
func FuzzLitecoinTx(f *testing.F) {
	seeds := append(verboseTxHexes(f, "mainnet_getblock_v2_2383207.json"), hexSeeds(f, "testnet4_raw_tx_*.hex.txt")...)
	fuzzTx(f, ltcFuzzCodec, maxSatoshi[payment.Litecoin], seeds)
}

// answer is an http.RoundTripper that answers every request with body.
type answer []byte

func (a answer) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(a)), ContentLength: int64(len(a))}, nil
}

// FuzzRPCHexAnswer feeds node answers to callHex (the fast path that finds
// the hex result without a JSON decode) and cross-checks it with a full
// JSON decode: whatever callHex returns, the envelope must hold as its
// result; and an answer larger than the cap is refused with a size error.
func FuzzRPCHexAnswer(f *testing.F) {
	f.Add([]byte(`{"result":"00ff","error":null,"id":1}`))
	f.Add([]byte(`{"result":null,"error":{"code":-5,"message":"Block not found"},"id":1}`))
	f.Add([]byte(`{"id":1,"error":null,"x":{"result":"abcd"},"result":"00"}`))
	for _, name := range []string{"core_pre22_get_block_hash_out_of_range_response.json", "core_pre22_rpc_in_warmup_response.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	const maxBody = 4096
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := newRPCClient("http://u:p@node.invalid", "", &http.Client{Transport: answer(body)}, maxBody)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.callHex(context.Background(), "getblock", nil, "h", 0)
		if len(body) > maxBody {
			if !errors.Is(err, chains.ErrInvalidResponse) || !strings.Contains(err.Error(), "larger than") {
				t.Fatalf("oversized answer: %v", err)
			}
			return
		}
		if err != nil {
			return
		}
		var env rpcResponse
		if err := json.Unmarshal(body, &env); err != nil {
			t.Fatalf("callHex accepted an answer that is not JSON: %v", err)
		}
		var s string
		if env.Error != nil || json.Unmarshal(env.Result, &s) != nil {
			t.Fatalf("callHex returned %x from an answer without a string result: %s", got, body)
		}
		if want, err := hex.DecodeString(s); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("callHex returned %x, the result is %q", got, s)
		}
	})
}

// An output paying more than the network's whole supply is refused (a
// corrupt or hostile node), never reported as a payment. Regression input
// of FuzzBitcoinTx: testdata/fuzz/FuzzBitcoinTx/beyond_supply.
func TestOutputBeyondSupplyIsRefused(t *testing.T) {
	for _, tc := range []struct {
		c      codec
		supply int64
	}{{btcFuzzCodec, maxSatoshi[payment.Bitcoin]}, {ltcFuzzCodec, maxSatoshi[payment.Litecoin]}} {
		tx := btcwire.NewMsgTx(2)
		tx.AddTxIn(btcwire.NewTxIn(&btcwire.OutPoint{Index: 0}, nil, nil))
		tx.AddTxOut(btcwire.NewTxOut(tc.supply+1, []byte{0x51}))
		var raw bytes.Buffer
		if err := tx.Serialize(&raw); err != nil {
			t.Fatal(err)
		}
		m, err := tc.c.tx(raw.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := transfer(tc.c, m.txid, 0, m.outs[0].script, m.outs[0].value); err == nil {
			t.Fatalf("%T: an output of %d base units (supply %d) was accepted", tc.c, tc.supply+1, tc.supply)
		}
		if _, err := transfer(tc.c, m.txid, 0, m.outs[0].script, tc.supply); err != nil {
			t.Fatalf("%T: the whole supply in one output refused: %v", tc.c, err)
		}
	}
}

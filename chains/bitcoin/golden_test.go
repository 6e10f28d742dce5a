package bitcoin

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	ltcwire "github.com/ltcsuite/ltcd/wire"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// verboseBlock is the part of a `getblock <hash> 2` capture the golden tests
// compare against.
type verboseBlock struct {
	Hash     string      `json:"hash"`
	Height   uint64      `json:"height"`
	Version  int32       `json:"version"`
	Merkle   string      `json:"merkleroot"`
	Time     uint32      `json:"time"`
	Nonce    uint32      `json:"nonce"`
	Bits     string      `json:"bits"`
	Previous string      `json:"previousblockhash"`
	Tx       []verboseTx `json:"tx"`
}

type verboseTx struct {
	TxID string `json:"txid"`
	Hex  string `json:"hex"`
	Vout []struct {
		Value        json.Number `json:"value"`
		N            int64       `json:"n"`
		ScriptPubKey struct {
			Hex       string   `json:"hex"`
			Address   string   `json:"address"`   // Core v22+
			Addresses []string `json:"addresses"` // Core 0.21, Litecoin Core
		} `json:"scriptPubKey"`
	} `json:"vout"`
}

func readVerbose(t *testing.T, path string) verboseBlock {
	t.Helper()
	f, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(f))
	dec.UseNumber()
	var b verboseBlock
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

// reversedHash decodes a display-order hash into wire (little-endian) order.
func reversedHash(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		t.Fatalf("bad hash %q", s)
	}
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return b
}

// assemble serializes a block from the header fields and per-transaction hex
// of a verbose capture: the bytes `getblock <hash> 0` returns (for Litecoin,
// plus tail, the MWEB part, which the verbose capture does not carry).
func assemble(t *testing.T, vb verboseBlock, tail []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	le := func(v uint32) { _ = binary.Write(&buf, binary.LittleEndian, v) }
	le(uint32(vb.Version))
	buf.Write(reversedHash(t, vb.Previous))
	buf.Write(reversedHash(t, vb.Merkle))
	le(vb.Time)
	bits, err := strconv.ParseUint(vb.Bits, 16, 32)
	if err != nil {
		t.Fatal(err)
	}
	le(uint32(bits))
	le(vb.Nonce)
	if len(vb.Tx) >= 0xfd {
		t.Fatal("test assembler handles < 253 transactions")
	}
	buf.WriteByte(byte(len(vb.Tx)))
	for _, tx := range vb.Tx {
		b, err := hex.DecodeString(tx.Hex)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
	}
	buf.Write(tail)
	return buf.Bytes()
}

// serveBlock runs a fake node that serves one raw block at one height.
func serveBlock(t *testing.T, height uint64, hash string, raw []byte) string {
	return fakeNode(t, func(method string, params []json.RawMessage) rpcReply {
		switch method {
		case "getblockhash":
			if string(params[0]) == strconv.FormatUint(height, 10) {
				return rpcReply{result: hash}
			}
			return rpcReply{code: -8, msg: "Block height out of range"}
		case "getblock":
			if string(params[0]) == strconv.Quote(hash) && string(params[1]) == "0" {
				return rpcReply{result: hex.EncodeToString(raw)}
			}
			return rpcReply{code: -5, msg: "Block not found"}
		}
		return rpcReply{code: -32601, msg: "Method not found"}
	})
}

// sats converts a verbose JSON coin amount ("0.12723722") to base units
// exactly.
func sats(t *testing.T, v json.Number) int64 {
	t.Helper()
	n, err := payment.ParseUnits(v.String(), 8)
	if err != nil {
		// Core prints tiny values in exponent form (7.74e-06).
		f, _, perr := strings.Cut(v.String(), "e-")
		if perr {
			exp, _ := strconv.Atoi(v.String()[len(f)+2:])
			n, err = payment.ParseUnits("0."+strings.Repeat("0", exp-1)+strings.ReplaceAll(f, ".", ""), 8)
		}
		if err != nil {
			t.Fatalf("amount %s: %v", v, err)
		}
	}
	return n.Int64()
}

// checkAgainstVerbose watches every output script of vb and checks that
// Block reports every output, in order, with the capture's txid, index,
// amount and address.
func checkAgainstVerbose(t *testing.T, c *Client, vb verboseBlock) chains.Block {
	t.Helper()
	w := chains.NewWatchSet(64)
	type want struct {
		txid, addr string
		n, value   int64
	}
	var wants []want
	for _, tx := range vb.Tx {
		for _, o := range tx.Vout {
			script, err := hex.DecodeString(o.ScriptPubKey.Hex)
			if err != nil {
				t.Fatal(err)
			}
			w.Add(script)
			addr := o.ScriptPubKey.Address
			if addr == "" && len(o.ScriptPubKey.Addresses) == 1 {
				addr = o.ScriptPubKey.Addresses[0]
			}
			wants = append(wants, want{tx.TxID, addr, o.N, sats(t, o.Value)})
		}
	}
	b, err := c.Block(context.Background(), chains.Height(vb.Height), w)
	if err != nil {
		t.Fatalf("Block(%d): %v", vb.Height, err)
	}
	if b.Hash != vb.Hash || b.Parent != vb.Previous || b.Height != chains.Height(vb.Height) || b.Time.Unix() != int64(vb.Time) {
		t.Fatalf("block ref %+v time %v, want hash %s parent %s height %d time %d", b.BlockRef, b.Time, vb.Hash, vb.Previous, vb.Height, vb.Time)
	}
	if len(b.Transfers) != len(wants) {
		t.Fatalf("%d transfers, want %d (every output is watched)", len(b.Transfers), len(wants))
	}
	for i, tr := range b.Transfers {
		wt := wants[i]
		if tr.TxID != wt.txid || tr.Index != wt.n || tr.Amount.Int64() != wt.value || tr.Address != wt.addr || tr.Asset != payment.Native {
			t.Errorf("transfer %d = {%s %d %s %q %s}, want {%s %d %d %q native}",
				i, tr.TxID, tr.Index, tr.Amount, tr.Address, tr.Asset, wt.txid, wt.n, wt.value, wt.addr)
		}
	}
	return b
}

func TestGoldenBitcoinMainnet766390(t *testing.T) {
	vb := readVerbose(t, "testdata/mainnet_getblock_v2_766390.json")
	if len(vb.Tx) != 16 {
		t.Fatalf("capture has %d transactions, want 16", len(vb.Tx))
	}
	raw := assemble(t, vb, nil)
	c := newTestClient(t, payment.Bitcoin, Mainnet, serveBlock(t, vb.Height, vb.Hash, raw))
	checkAgainstVerbose(t, c, vb)

	// A pretty-printed answer (no fast path) decodes the same.
	pretty := scripted(t, map[string]reply{
		"getblockhash": {200, "{\n  \"result\": \"" + vb.Hash + "\",\n  \"error\": null,\n  \"id\": 1\n}"},
		"getblock":     {200, "{\n  \"result\": \"" + hex.EncodeToString(raw) + "\",\n  \"error\": null,\n  \"id\": 1\n}"},
	})
	checkAgainstVerbose(t, newTestClient(t, payment.Bitcoin, Mainnet, pretty), vb)

	// Nothing watched: no transfers, and nothing else changes.
	b, err := c.Block(context.Background(), chains.Height(vb.Height), chains.NewWatchSet(0))
	if err != nil || len(b.Transfers) != 0 || b.Hash != vb.Hash {
		t.Fatalf("unwatched Block = %+v, %v", b, err)
	}
	// Every transaction also decodes on its own (the mempool path).
	for _, tx := range vb.Tx {
		raw, _ := hex.DecodeString(tx.Hex)
		m, err := c.codec.tx(raw)
		if err != nil || m.txid != tx.TxID || len(m.outs) != len(tx.Vout) {
			t.Fatalf("tx %s: decoded %s with %d outputs, %v", tx.TxID, m.txid, len(m.outs), err)
		}
	}
}

func TestGoldenLitecoinMainnet2383207(t *testing.T) {
	vb := readVerbose(t, "testdata/mainnet_getblock_v2_2383207.json")
	hogex := vb.Tx[len(vb.Tx)-1]
	if hogex.TxID != "62d73befab5f48db9841aea938e57c8054dfdc284d6a60fc7d3363662aa078e6" {
		t.Fatalf("capture's last tx is %s", hogex.TxID)
	}
	// The verbose capture lacks the MWEB block body; assemble the block with
	// the "no MWEB block" marker after the HogEx. Header, transactions and
	// therefore the block hash are the real ones.
	raw := assemble(t, vb, []byte{0})
	var mb ltcwire.MsgBlock
	if err := mb.Deserialize(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	if !mb.Transactions[len(mb.Transactions)-1].IsHogEx {
		t.Fatal("ltcd did not flag the last transaction as HogEx")
	}
	c := newTestClient(t, payment.Litecoin, Mainnet, serveBlock(t, vb.Height, vb.Hash, raw))
	b := checkAgainstVerbose(t, c, vb)
	last := b.Transfers[len(b.Transfers)-1]
	if last.TxID != hogex.TxID || last.Index != 0 || last.Amount.Int64() != 793199220526 {
		t.Fatalf("HogEx output: %+v (%s)", last, last.Amount)
	}

	// Only the P2SH script of MLc1MDduz8VyGdjjo3i5M46Z9RXhy624Q2 watched.
	script, _ := hex.DecodeString("a9148b5b26127e132bf460aa6e2812e52727965a1b9c87")
	w := chains.NewWatchSet(1)
	w.Add(script)
	b, err := c.Block(context.Background(), chains.Height(vb.Height), w)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Transfers) != 1 {
		t.Fatalf("transfers = %+v, want exactly the one P2SH output", b.Transfers)
	}
	got := b.Transfers[0]
	if got.Address != "MLc1MDduz8VyGdjjo3i5M46Z9RXhy624Q2" || got.Amount.Int64() != 12723722 || got.Index != 0 ||
		!bytes.Equal(got.Key, script) {
		t.Fatalf("P2SH transfer = %+v (%s)", got, got.Amount)
	}
}

func readHexFile(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.Join(strings.Fields(string(f)), ""))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

func TestGoldenLitecoinTestnet4MWEBBlocks(t *testing.T) {
	blocks := []struct {
		height uint64
		hash   string
	}{
		{1821752, "ece484c02e84e4b1c551fbbdde3045e9096c970fbd3e31f2586b68d50dad6b24"},
		{2215584, "7e35fabe7b3c694ebeb0368a1a1c31e83962f3c5b4cc8dcede3ae94ed3deb306"},
		{2319633, "e9fe2c6496aedefa8bf6529bdc5c1f9fd4af565ca4c98cab73e3a1f616fb3502"},
		{2321749, "57929846db4a92d937eb596354d10949e33c815ee45df0c9b3bbdfb283e15bcd"},
	}
	mwebSeen := 0
	for _, bl := range blocks {
		raw := readHexFile(t, "testdata/testnet4_raw_block_"+strconv.FormatUint(bl.height, 10)+".hex.txt")
		var mb ltcwire.MsgBlock
		if err := mb.Deserialize(bytes.NewReader(raw)); err != nil {
			t.Fatalf("block %d: ltcd: %v", bl.height, err)
		}
		last := mb.Transactions[len(mb.Transactions)-1]
		// Watch every output of every transaction, HogEx included.
		w := chains.NewWatchSet(16)
		outputs := 0
		for _, tx := range mb.Transactions {
			for _, o := range tx.TxOut {
				w.Add(o.PkScript)
				outputs++
			}
		}
		c := newTestClient(t, payment.Litecoin, Testnet, serveBlock(t, bl.height, bl.hash, raw))
		b, err := c.Block(context.Background(), chains.Height(bl.height), w)
		if err != nil {
			t.Fatalf("Block(%d): %v", bl.height, err)
		}
		if b.Hash != bl.hash || len(b.Transfers) != outputs {
			t.Fatalf("block %d: hash %s, %d transfers; want %s, %d", bl.height, b.Hash, len(b.Transfers), bl.hash, outputs)
		}
		if last.IsHogEx {
			hogexID := last.TxHash().String()
			n := 0
			for _, tr := range b.Transfers {
				if tr.TxID == hogexID {
					n++
				}
			}
			if n != len(last.TxOut) || n == 0 {
				t.Fatalf("block %d: %d HogEx transfers, want %d", bl.height, n, len(last.TxOut))
			}
			if mb.MwebHeader != nil {
				mwebSeen++
			}
		}
		// A truncated block is an invalid response naming the height.
		c = newTestClient(t, payment.Litecoin, Testnet, serveBlock(t, bl.height, bl.hash, raw[:len(raw)-7]))
		_, err = c.Block(context.Background(), chains.Height(bl.height), w)
		if !errors.Is(err, chains.ErrInvalidResponse) || !strings.Contains(err.Error(), strconv.FormatUint(bl.height, 10)) {
			t.Fatalf("truncated block %d: %v", bl.height, err)
		}
	}
	if mwebSeen == 0 {
		t.Fatal("no fixture block carried a HogEx with an MWEB block")
	}
}

func TestGoldenLitecoinTestnet4Transactions(t *testing.T) {
	c := newTestClient(t, payment.Litecoin, Testnet, "http://u:p@127.0.0.1:1")
	for _, id := range []string{
		"de22f4de7116b8482a691cc5e552c4212f0ae77e3c8d92c9cb85c29f4dc1f47c", // HogEx
		"8b8343978dbef95d54da796977e9a254565c0dc9ce54917d9111267547fcde03", // MWEB peg-in
	} {
		raw := readHexFile(t, "testdata/testnet4_raw_tx_"+id+".hex.txt")
		m, err := c.codec.tx(raw)
		if err != nil || m.txid != id {
			t.Fatalf("tx %s: decoded %q, %v", id, m.txid, err)
		}
	}
}

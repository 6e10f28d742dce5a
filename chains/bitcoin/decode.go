package bitcoin

import (
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// decodedBlock is a raw block reduced to what Block returns.
type decodedBlock struct {
	hash      string
	parent    string
	time      time.Time
	txCount   int
	transfers []chains.Transfer
}

// txOut is one output of a mempool transaction, kept between Pending calls.
type txOut struct {
	script []byte
	value  int64
}

// mempoolTx is a decoded mempool transaction: its id and its outputs.
type mempoolTx struct {
	txid string
	outs []txOut
}

// codec is what differs between Bitcoin and Litecoin: the wire decoder (btcd
// or ltcd, which also parses HogEx and MWEB data) and the address encoding.
type codec interface {
	// block decodes a raw serialized block and returns the transfers of its
	// outputs whose script w contains. raw is not retained.
	block(raw []byte, w chains.Watched) (decodedBlock, error)
	// tx decodes a raw serialized transaction. raw is not retained.
	tx(raw []byte) (mempoolTx, error)
	// address renders an output script in the network's display form, or ""
	// for a script that has no address form.
	address(script []byte) string
	// supply is the network's supply in base units: no output pays more.
	supply() int64
}

// maxSatoshi is each network's supply in base units: no output can pay
// more (Bitcoin Core's MAX_MONEY; Litecoin's is 84 million LTC).
var maxSatoshi = map[payment.Network]int64{
	payment.Bitcoin:  21_000_000 * 100_000_000,
	payment.Litecoin: 84_000_000 * 100_000_000,
}

// errTrailing reports bytes left after a complete block or transaction.
var errTrailing = errors.New("trailing bytes after the serialized data")

// output is output index of a block's transaction tx.
type output struct {
	tx, index int
	script    []byte
	value     int64
	coinbase  bool // an output of the block's coinbase transaction
	pegout    bool // an output of the block's HogEx transaction (an MWEB peg-out)
}

// transfers returns the transfers of a block's outputs to watched scripts,
// in block order. Every script is looked up in one batch, so the watched
// set's memory loads overlap; txid gives the id of transaction tx, asked
// for matching transactions only.
func transfers(c codec, w chains.Watched, outs []output, txid func(tx int) string) ([]chains.Transfer, error) {
	scripts := make([][]byte, len(outs))
	for i := range outs {
		scripts[i] = outs[i].script
	}
	watched := make([]bool, len(outs))
	chains.ContainsEach(w, scripts, watched)
	var ts []chains.Transfer
	id, idOf := "", -1
	for i, o := range outs {
		if !watched[i] {
			continue
		}
		if idOf != o.tx {
			id, idOf = txid(o.tx), o.tx
		}
		t, err := transfer(c, id, o.index, o.script, o.value)
		if err != nil {
			return nil, err
		}
		t.Coinbase, t.PegOut = o.coinbase, o.pegout
		ts = append(ts, t)
	}
	return ts, nil
}

// transfer builds the Transfer of output vout of txid. key is copied, so the
// decoder's buffers are not kept alive.
func transfer(c codec, txid string, vout int, script []byte, value int64) (chains.Transfer, error) {
	if value < 0 {
		return chains.Transfer{}, fmt.Errorf("tx %s output %d: negative value %d", txid, vout, value)
	}
	if value > c.supply() {
		return chains.Transfer{}, fmt.Errorf("tx %s output %d: value %d is more than the network's supply", txid, vout, value)
	}
	key := make([]byte, len(script))
	copy(key, script)
	return chains.Transfer{
		TxID:    txid,
		Index:   int64(vout),
		Asset:   payment.Native,
		Key:     key,
		Address: c.address(key),
		Amount:  big.NewInt(value),
	}, nil
}

// recovered runs a decoder and turns a panic inside the wire library (a
// malformed MWEB transaction with no kernel, say) into an error: a hostile
// or broken node must not crash the daemon.
func recovered[T any](decode func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoder panic: %v", r)
		}
	}()
	return decode()
}

// isNullOutpoint reports whether an input spends the null outpoint (index
// 0xffffffff of the all-zero hash): the one input of a coinbase transaction.
func isNullOutpoint(index uint32, hash [32]byte) bool {
	return index == 0xffffffff && hash == [32]byte{}
}

package bitcoin

import (
	"bytes"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// btcCodec decodes Bitcoin blocks with btcd's wire package.
type btcCodec struct {
	params *chaincfg.Params
}

func (c btcCodec) block(raw []byte, w chains.Watched) (decodedBlock, error) {
	var mb wire.MsgBlock
	r := bytes.NewReader(raw)
	if err := mb.Deserialize(r); err != nil {
		return decodedBlock{}, err
	}
	if r.Len() != 0 {
		return decodedBlock{}, errTrailing
	}
	d := decodedBlock{
		hash:    mb.BlockHash().String(),
		parent:  mb.Header.PrevBlock.String(),
		time:    mb.Header.Timestamp.UTC(),
		txCount: len(mb.Transactions),
	}
	// Every output script is looked up in one batch, so the watched set's
	// memory loads overlap.
	var scripts [][]byte
	for _, tx := range mb.Transactions {
		for _, out := range tx.TxOut {
			scripts = append(scripts, out.PkScript)
		}
	}
	watched := make([]bool, len(scripts))
	chains.ContainsEach(w, scripts, watched)
	for _, tx := range mb.Transactions {
		var txid string // computed for matching transactions only
		for i, out := range tx.TxOut {
			ok := watched[0]
			watched = watched[1:]
			if !ok {
				continue
			}
			if txid == "" {
				txid = tx.TxHash().String()
			}
			t, err := transfer(c, txid, i, out.PkScript, out.Value)
			if err != nil {
				return decodedBlock{}, err
			}
			d.transfers = append(d.transfers, t)
		}
	}
	return d, nil
}

func (c btcCodec) tx(raw []byte) (mempoolTx, error) {
	var tx wire.MsgTx
	r := bytes.NewReader(raw)
	if err := tx.Deserialize(r); err != nil {
		return mempoolTx{}, err
	}
	if r.Len() != 0 {
		return mempoolTx{}, errTrailing
	}
	m := mempoolTx{txid: tx.TxHash().String(), outs: make([]txOut, len(tx.TxOut))}
	for i, out := range tx.TxOut {
		m.outs[i] = txOut{script: out.PkScript, value: out.Value}
	}
	return m, nil
}

func (btcCodec) supply() int64 { return maxSatoshi[payment.Bitcoin] }

func (c btcCodec) address(script []byte) string {
	_, addrs, _, err := txscript.ExtractPkScriptAddrs(script, c.params)
	if err != nil || len(addrs) != 1 {
		return ""
	}
	return addrs[0].EncodeAddress()
}

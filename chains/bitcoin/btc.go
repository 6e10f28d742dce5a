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
	var outs []output
	for t, tx := range mb.Transactions {
		for i, out := range tx.TxOut {
			outs = append(outs, output{tx: t, index: i, script: out.PkScript, value: out.Value, coinbase: t == 0 && len(tx.TxIn) == 1 && isNullOutpoint(tx.TxIn[0].PreviousOutPoint.Index, tx.TxIn[0].PreviousOutPoint.Hash)})
		}
	}
	var err error
	d.transfers, err = transfers(c, w, outs, func(t int) string { return mb.Transactions[t].TxHash().String() })
	if err != nil {
		return decodedBlock{}, err
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

package bitcoin

import (
	"bytes"

	"github.com/ltcsuite/ltcd/chaincfg"
	"github.com/ltcsuite/ltcd/txscript"
	"github.com/ltcsuite/ltcd/wire"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// ltcCodec decodes Litecoin blocks with ltcd's wire package, which parses the
// HogEx transaction (flag 0x08) and the MWEB block that follows it. HogEx
// outputs (MWEB peg-outs) are scanned like any other output; MWEB-internal
// outputs are confidential and cannot be matched.
type ltcCodec struct {
	params *chaincfg.Params
}

func (c ltcCodec) block(raw []byte, w chains.Watched) (decodedBlock, error) {
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
			// The HogEx (the last transaction of a block with an MWEB
			// extension block) pays the block's peg-outs after its first
			// output, which holds the MWEB's coins.
			outs = append(outs, output{tx: t, index: i, script: out.PkScript, value: out.Value, coinbase: t == 0 && len(tx.TxIn) == 1 && isNullOutpoint(tx.TxIn[0].PreviousOutPoint.Index, tx.TxIn[0].PreviousOutPoint.Hash),
				pegout: tx.IsHogEx})
		}
	}
	var err error
	d.transfers, err = transfers(c, w, outs, func(t int) string { return mb.Transactions[t].TxHash().String() })
	if err != nil {
		return decodedBlock{}, err
	}
	return d, nil
}

func (c ltcCodec) tx(raw []byte) (mempoolTx, error) {
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

func (ltcCodec) supply() int64 { return maxSatoshi[payment.Litecoin] }

func (c ltcCodec) address(script []byte) string {
	class, addrs, _, err := txscript.ExtractPkScriptAddrs(script, c.params)
	// MWEB HogAddr and peg-in outputs have no address (Litecoin Core shows
	// none); ltcd would render them as witness v8/v9 bech32m strings.
	if err != nil || len(addrs) != 1 || class == txscript.WitnessMwebHogAddrTy || class == txscript.WitnessMwebPeginTy {
		return ""
	}
	return addrs[0].EncodeAddress()
}

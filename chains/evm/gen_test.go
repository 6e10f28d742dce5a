package evm_test

import (
	"encoding/binary"
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/paywatch/paywatch/chains/evm"
)

// genTx is a generated transaction.
type genTx struct {
	To       *common.Address
	Value    *big.Int
	Failed   bool
	Internal []genCall // nested calls for the callTracer
}

// genCall is a call frame of a generated trace.
type genCall struct {
	Type  string
	From  *common.Address // default genFrom
	To    common.Address
	Value *big.Int
	Error string
	Calls []genCall
}

// genLog is a generated log of transaction Tx.
type genLog struct {
	Tx      int
	Address common.Address
	Topics  []common.Hash
	Data    []byte
}

// genBlock generates a block, its receipts, logs and traces in geth's JSON
// shapes (field names and encodings of geth 1.17 answers).
type genBlock struct {
	Number uint64
	Parent common.Hash
	Txs    []genTx
	Logs   []genLog
}

func (g *genBlock) hash() common.Hash {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], g.Number)
	return crypto.Keccak256Hash([]byte("block"), b[:], g.Parent[:])
}

func (g *genBlock) txHash(i int) common.Hash {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], g.Number)
	binary.BigEndian.PutUint64(b[8:], uint64(i))
	return crypto.Keccak256Hash([]byte("tx"), b[:], g.Parent[:])
}

var (
	genFrom   = common.HexToAddress("0x7435ed30a8b4aeb0877cef0c6e8cffe834eb865f")
	zeroBloom = "0x" + strings.Repeat("0", 512)
	genSig    = "0x" + strings.Repeat("ab", 32)
)

func hexBig(v *big.Int) string {
	if v == nil {
		return "0x0"
	}
	return (*hexutil.Big)(v).String()
}

func (g *genBlock) install(t testing.TB, f *fakeNode) common.Hash {
	t.Helper()
	h := g.hash()
	num := hexutil.Uint64(g.Number).String()
	ts := hexutil.Uint64(1_700_000_000 + g.Number*12).String()
	txs := make([]map[string]any, len(g.Txs))
	receipts := make([]map[string]any, len(g.Txs))
	traces := make([]map[string]any, len(g.Txs))
	logsByTx := make([][]map[string]any, len(g.Txs))
	var allLogs []json.RawMessage
	for i, l := range g.Logs {
		lj := map[string]any{
			"address": l.Address, "topics": l.Topics, "data": hexutil.Bytes(l.Data),
			"blockNumber": num, "blockHash": h, "blockTimestamp": ts,
			"transactionHash": g.txHash(l.Tx), "transactionIndex": hexutil.Uint64(l.Tx),
			"logIndex": hexutil.Uint64(i), "removed": false,
		}
		if !g.Txs[l.Tx].Failed {
			logsByTx[l.Tx] = append(logsByTx[l.Tx], lj)
			allLogs = append(allLogs, mustJSON(t, lj))
		}
	}
	for i, tx := range g.Txs {
		var to any
		if tx.To != nil {
			to = *tx.To
		}
		txs[i] = map[string]any{
			"blockHash": h, "blockNumber": num, "blockTimestamp": ts, "from": genFrom,
			"gas": "0x5208", "gasPrice": "0x3b9aca07", "maxFeePerGas": "0x3b9aca0e", "maxPriorityFeePerGas": "0x1",
			"hash": g.txHash(i), "input": "0xa9059cbb000000000000000000000000" + strings.Repeat("11", 20) + strings.Repeat("00", 32),
			"nonce": hexutil.Uint64(i), "to": to, "transactionIndex": hexutil.Uint64(i), "value": hexBig(tx.Value),
			"type": "0x2", "accessList": []any{}, "chainId": "0x1", "v": "0x1", "yParity": "0x1", "r": genSig, "s": genSig,
		}
		status := "0x1"
		if tx.Failed {
			status = "0x0"
		}
		logs := logsByTx[i]
		if logs == nil {
			logs = []map[string]any{}
		}
		receipts[i] = map[string]any{
			"blockHash": h, "blockNumber": num, "contractAddress": nil, "cumulativeGasUsed": hexutil.Uint64(21000 * (i + 1)),
			"effectiveGasPrice": "0x3b9aca07", "from": genFrom, "gasUsed": "0x5208", "logs": logs, "logsBloom": zeroBloom,
			"status": status, "to": to, "transactionHash": g.txHash(i), "transactionIndex": hexutil.Uint64(i), "type": "0x2",
		}
		top := map[string]any{"type": "CALL", "from": genFrom, "to": to, "value": hexBig(tx.Value),
			"gas": "0x5208", "gasUsed": "0x5208", "input": "0x"}
		if tx.Failed {
			top["error"] = "execution reverted"
		}
		if len(tx.Internal) > 0 {
			top["calls"] = frames(tx.Internal)
		}
		traces[i] = map[string]any{"txHash": g.txHash(i), "result": top}
	}
	block := map[string]any{
		"baseFeePerGas": "0x7", "difficulty": "0x0", "extraData": "0x", "gasLimit": "0x1c9c380",
		"gasUsed": "0x0", "hash": h, "logsBloom": zeroBloom, "miner": common.Address{},
		"mixHash": common.Hash{}, "nonce": "0x0000000000000000", "number": num, "parentHash": g.Parent,
		"receiptsRoot": common.Hash{}, "sha3Uncles": common.Hash{}, "size": "0x300", "stateRoot": common.Hash{},
		"timestamp": ts, "transactions": txs, "transactionsRoot": common.Hash{}, "uncles": []any{}, "withdrawals": []any{},
	}
	f.addBlock(t, mustJSON(t, block))
	f.receipts[h] = mustJSON(t, receipts)
	f.traces[h] = mustJSON(t, traces)
	f.addLogs(t, h, allLogs...)
	for i, r := range receipts {
		f.txReceipt[g.txHash(i)] = mustJSON(t, r)
	}
	return h
}

func frames(calls []genCall) []map[string]any {
	out := make([]map[string]any, len(calls))
	for i, c := range calls {
		typ := c.Type
		if typ == "" {
			typ = "CALL"
		}
		m := map[string]any{"type": typ, "from": genFrom, "to": c.To, "value": hexBig(c.Value), "gas": "0x0", "gasUsed": "0x0", "input": "0x"}
		if c.From != nil {
			m["from"] = *c.From
		}
		if c.Error != "" {
			m["error"] = c.Error
		}
		if len(c.Calls) > 0 {
			m["calls"] = frames(c.Calls)
		}
		out[i] = m
	}
	return out
}

// transferLog is an ERC-20 Transfer log of contract from from to to.
func transferLog(tx int, contract, from, to common.Address, amount *big.Int) genLog {
	return genLog{Tx: tx, Address: contract, Topics: []common.Hash{
		evm.TransferTopic, common.BytesToHash(from.Bytes()), common.BytesToHash(to.Bytes()),
	}, Data: common.LeftPadBytes(amount.Bytes(), 32)}
}

// addr returns a deterministic address for n.
func addr(n uint64) common.Address {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	return common.BytesToAddress(crypto.Keccak256(b[:])[12:])
}

package tronfake

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// Internal is one internal transaction of a contract call: value a contract
// sends to another account while it runs (java-tron's
// protocol.InternalTransaction).
type Internal struct {
	// To is the recipient, 20 bytes or 21 with the 41 prefix.
	To []byte
	// Amount is in sun, or in the TRC-10 token's units when TokenID is set.
	Amount int64
	// TokenID is the TRC-10 token id; empty for TRX.
	TokenID string
	// Rejected marks an internal call that failed inside a transaction that
	// otherwise succeeded; it moved nothing.
	Rejected bool
}

// CallContract queues a TriggerSmartContract from from to contract whose
// TransactionInfo lists internals as internal_transactions, in order, and
// returns its txID. Each entry is printed the way java-tron's JsonFormat
// prints it with visible=false (documentation-en gettransactioninfobyid.md):
// hash, caller_address (the contract), transferTo_address (41-hex),
// callValueInfo [{callValue}] or [{tokenId, callValue}] ([{}] for a call
// that moves nothing: proto3 omits zero values), note hex of "call", and
// rejected only when true. When success is false the transaction is
// REVERT, the info says result FAILED with receipt.result REVERT, and every
// internal transaction is marked rejected, as java-tron does for a reverted
// program.
func (n *Node) CallContract(contract, from []byte, success bool, internals ...Internal) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	c, owner := wire(contract), wire(from)
	data := []byte{0x3c, 0xcf, 0xd6, 0x0b} // withdraw()
	raw := n.rawLocked(ctTrigger, "type.googleapis.com/protocol.TriggerSmartContract",
		triggerContract(owner, c, data), 100_000_000)
	value := map[string]any{
		"contract_address": hex.EncodeToString(c),
		"data":             hex.EncodeToString(data),
		"owner_address":    hex.EncodeToString(owner),
	}
	ret := "SUCCESS"
	if !success {
		ret = "REVERT"
	}
	p := n.txLocked(raw, "TriggerSmartContract", value, ret)
	p.tx["raw_data"].(map[string]any)["fee_limit"] = raw.feeLimit
	its := make([]map[string]any, 0, len(internals))
	for i, in := range internals {
		cv := map[string]any{}
		if in.Amount != 0 {
			cv["callValue"] = in.Amount
		}
		if in.TokenID != "" {
			cv["tokenId"] = in.TokenID
		}
		var seq [8]byte
		binary.BigEndian.PutUint64(seq[:], uint64(i))
		h := sha256.Sum256(append([]byte(p.id), seq[:]...))
		it := map[string]any{
			"hash":               hex.EncodeToString(h[:]),
			"caller_address":     hex.EncodeToString(c),
			"transferTo_address": hex.EncodeToString(wire(in.To)),
			"callValueInfo":      []map[string]any{cv},
			"note":               hex.EncodeToString([]byte("call")),
		}
		if in.Rejected || !success {
			it["rejected"] = true
		}
		its = append(its, it)
	}
	p.info = map[string]any{
		"contractResult":   []string{""},
		"contract_address": hex.EncodeToString(c),
		"id":               p.id,
		"receipt": map[string]any{
			"energy_usage_total": 9852,
			"net_usage":          283,
			"result":             ret,
		},
	}
	if len(its) > 0 && !n.noInternalTx {
		p.info["internal_transactions"] = its
	}
	if !success {
		p.info["result"] = "FAILED"
		p.info["resMessage"] = hex.EncodeToString([]byte("REVERT opcode executed"))
	}
	n.pending = append(n.pending, p)
	return p.id
}

// PayInternalTRX queues a successful contract call in which contract sends
// sun to to (one internal transaction, rejected as given) and returns the
// txID. The caller is a fresh account.
func (n *Node) PayInternalTRX(contract, to []byte, sun int64, rejected bool) string {
	n.mu.Lock()
	n.seq++
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], uint64(n.seq))
	n.mu.Unlock()
	from := sha256.Sum256(append([]byte("tronfake caller"), seq[:]...))
	return n.CallContract(contract, from[:20], true, Internal{To: to, Amount: sun, Rejected: rejected})
}

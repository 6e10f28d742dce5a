package tronfake

import (
	"crypto/sha256"
	"encoding/binary"
)

// The fake builds the protobuf encodings java-tron hashes, so that txID =
// sha256(raw_data) and blockID = number ‖ sha256(header raw)[8:] hold exactly
// as on the real chain.

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendKey(b []byte, field int, wire int) []byte {
	return appendVarint(b, uint64(field<<3|wire))
}

func appendInt(b []byte, field int, v int64) []byte {
	if v == 0 {
		return b // proto3 omits zero values
	}
	return appendVarint(appendKey(b, field, 0), uint64(v))
}

func appendBytes(b []byte, field int, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = appendVarint(appendKey(b, field, 2), uint64(len(v)))
	return append(b, v...)
}

// Contract type numbers of protocol.Transaction.Contract.ContractType.
const (
	ctTransfer = 1
	ctTrigger  = 31
)

// txRaw is protocol.Transaction.raw with the fields a payment uses.
type txRaw struct {
	refBlockBytes []byte // field 1
	refBlockHash  []byte // field 4
	expiration    int64  // field 8
	contractType  int    // contract field 1
	typeURL       string // Any field 1
	value         []byte // Any field 2 (the encoded contract)
	timestamp     int64  // field 14
	feeLimit      int64  // field 18
}

func (r *txRaw) marshal() []byte {
	var any []byte
	any = appendBytes(any, 1, []byte(r.typeURL))
	any = appendBytes(any, 2, r.value)
	var contract []byte
	contract = appendInt(contract, 1, int64(r.contractType))
	contract = appendBytes(contract, 2, any)

	var b []byte
	b = appendBytes(b, 1, r.refBlockBytes)
	b = appendBytes(b, 4, r.refBlockHash)
	b = appendInt(b, 8, r.expiration)
	b = appendBytes(b, 11, contract)
	b = appendInt(b, 14, r.timestamp)
	b = appendInt(b, 18, r.feeLimit)
	return b
}

// transferContract encodes protocol.TransferContract.
func transferContract(owner, to []byte, amount int64) []byte {
	var b []byte
	b = appendBytes(b, 1, owner)
	b = appendBytes(b, 2, to)
	return appendInt(b, 3, amount)
}

// triggerContract encodes protocol.TriggerSmartContract without call value.
func triggerContract(owner, contract, data []byte) []byte {
	var b []byte
	b = appendBytes(b, 1, owner)
	b = appendBytes(b, 2, contract)
	return appendBytes(b, 4, data)
}

// headerRaw is protocol.BlockHeader.raw.
type headerRaw struct {
	timestamp  int64  // 1
	txTrieRoot []byte // 2
	parentHash []byte // 3
	number     int64  // 7
	witness    []byte // 9
	version    int64  // 10
}

// blockID is what java-tron's BlockCapsule.getBlockId computes: the 8-byte
// big-endian number followed by bytes 8..32 of sha256(header raw).
func (h *headerRaw) blockID() []byte {
	var b []byte
	b = appendInt(b, 1, h.timestamp)
	b = appendBytes(b, 2, h.txTrieRoot)
	b = appendBytes(b, 3, h.parentHash)
	b = appendInt(b, 7, h.number)
	b = appendBytes(b, 9, h.witness)
	b = appendInt(b, 10, h.version)
	sum := sha256.Sum256(b)
	binary.BigEndian.PutUint64(sum[:8], uint64(h.number))
	return sum[:]
}

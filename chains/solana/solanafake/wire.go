package solanafake

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/mr-tron/base58"
)

// packetDataSize is PACKET_DATA_SIZE: the largest transaction on the wire.
const packetDataSize = 1232

// The largest encoded transactions sendTransaction and simulateTransaction
// take (agave's MAX_BASE58_SIZE and MAX_BASE64_SIZE).
const (
	maxBase58Size = 1683
	maxBase64Size = 1644
)

// versionedTransactionType is the type name agave's decode errors print.
const versionedTransactionType = "solana_transaction::versioned::VersionedTransaction"

// wireInstr is a compiled instruction.
type wireInstr struct {
	program  int
	accounts []int
	data     []byte
}

// wireLookup is an address-table lookup of a v0 message.
type wireLookup struct {
	key                string
	writable, readonly []int
}

// wireTx is a transaction as a wallet sends it (a VersionedTransaction in
// bincode), with the byte range its signatures sign.
type wireTx struct {
	raw       []byte
	sigs      [][]byte
	message   []byte // the serialized message: what each signature signs
	version   int    // -1 legacy, 0 for v0
	header    header
	keys      []string
	blockhash string
	instrs    []wireInstr
	lookups   []wireLookup
}

// signature is the transaction's id: its first signature.
func (t *wireTx) signature() string { return base58.Encode(t.sigs[0]) }

var errEOF = errors.New("io error: unexpected end of file")

type wireReader struct {
	b   []byte
	off int
}

func (r *wireReader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errEOF
	}
	r.off++
	return r.b[r.off-1], nil
}

func (r *wireReader) bytes(n int) ([]byte, error) {
	if n < 0 || r.off+n > len(r.b) {
		return nil, errEOF
	}
	r.off += n
	return r.b[r.off-n : r.off], nil
}

// shortVec reads a compact-u16 length.
func (r *wireReader) shortVec() (int, error) {
	v := 0
	for i := 0; i < 3; i++ {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= int(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, errors.New("invalid value: integer `3`, expected a valid compact-u16")
}

func (r *wireReader) indexes() ([]int, error) {
	n, err := r.shortVec()
	if err != nil {
		return nil, err
	}
	b, err := r.bytes(n)
	if err != nil {
		return nil, err
	}
	out := make([]int, n)
	for i, x := range b {
		out[i] = int(x)
	}
	return out, nil
}

// parseWire deserializes a VersionedTransaction (bincode, trailing bytes
// allowed).
func parseWire(b []byte) (*wireTx, error) {
	r := &wireReader{b: b}
	t := &wireTx{raw: b, version: -1}
	n, err := r.shortVec()
	if err != nil {
		return nil, err
	}
	for range n {
		s, err := r.bytes(64)
		if err != nil {
			return nil, err
		}
		t.sigs = append(t.sigs, s)
	}
	start := r.off
	first, err := r.byte()
	if err != nil {
		return nil, err
	}
	if first&0x80 != 0 {
		if v := first & 0x7f; v != 0 {
			return nil, fmt.Errorf("invalid value: integer `%d`, expected a valid transaction message version", v)
		}
		t.version = 0
		if first, err = r.byte(); err != nil {
			return nil, err
		}
	}
	hb, err := r.bytes(2)
	if err != nil {
		return nil, err
	}
	t.header = header{NumRequiredSignatures: int(first), NumReadonlySignedAccounts: int(hb[0]), NumReadonlyUnsignedAccounts: int(hb[1])}
	nk, err := r.shortVec()
	if err != nil {
		return nil, err
	}
	for range nk {
		k, err := r.bytes(32)
		if err != nil {
			return nil, err
		}
		t.keys = append(t.keys, base58.Encode(k))
	}
	bh, err := r.bytes(32)
	if err != nil {
		return nil, err
	}
	t.blockhash = base58.Encode(bh)
	ni, err := r.shortVec()
	if err != nil {
		return nil, err
	}
	for range ni {
		p, err := r.byte()
		if err != nil {
			return nil, err
		}
		acc, err := r.indexes()
		if err != nil {
			return nil, err
		}
		dl, err := r.shortVec()
		if err != nil {
			return nil, err
		}
		data, err := r.bytes(dl)
		if err != nil {
			return nil, err
		}
		t.instrs = append(t.instrs, wireInstr{program: int(p), accounts: acc, data: data})
	}
	if t.version == 0 {
		nl, err := r.shortVec()
		if err != nil {
			return nil, err
		}
		for range nl {
			k, err := r.bytes(32)
			if err != nil {
				return nil, err
			}
			w, err := r.indexes()
			if err != nil {
				return nil, err
			}
			ro, err := r.indexes()
			if err != nil {
				return nil, err
			}
			t.lookups = append(t.lookups, wireLookup{key: base58.Encode(k), writable: w, readonly: ro})
		}
	}
	t.message = b[start:r.off]
	t.raw = b[:r.off]
	return t, nil
}

// decodeTransaction is agave's decode_and_deserialize for sendTransaction
// and simulateTransaction.
func decodeTransaction(encoded, encoding string) (*wireTx, *rpcError) {
	var b []byte
	switch encoding {
	case "base58":
		if len(encoded) > maxBase58Size {
			return nil, invalidParams2(fmt.Sprintf("base58 encoded %s too large: %d bytes (max: encoded/raw %d/%d)",
				versionedTransactionType, len(encoded), maxBase58Size, packetDataSize))
		}
		var err error
		if b, err = base58.Decode(encoded); err != nil {
			return nil, invalidParams2("invalid base58 encoding: InvalidCharacter { character: '0', index: 0 }")
		}
	case "base64":
		if len(encoded) > maxBase64Size {
			return nil, invalidParams2(fmt.Sprintf("base64 encoded %s too large: %d bytes (max: encoded/raw %d/%d)",
				versionedTransactionType, len(encoded), maxBase64Size, packetDataSize))
		}
		var err error
		if b, err = base64.StdEncoding.DecodeString(encoded); err != nil {
			return nil, invalidParams2(fmt.Sprintf("invalid base64 encoding: %v", err))
		}
	default:
		return nil, invalidParams2(fmt.Sprintf("unsupported encoding: %s. Supported encodings: base58, base64", encoding))
	}
	if len(b) > packetDataSize {
		return nil, invalidParams2(fmt.Sprintf("decoded %s too large: %d bytes (max: %d bytes)", versionedTransactionType, len(b), packetDataSize))
	}
	t, err := parseWire(b)
	if err != nil {
		return nil, invalidParams2(fmt.Sprintf("failed to deserialize %s: %v", versionedTransactionType, err))
	}
	return t, nil
}

// errSanitize is TransactionError::SanitizeFailure as sanitize_transaction
// reports it.
var errSanitize = invalidParams2("invalid transaction: Transaction failed to sanitize accounts offsets correctly")

// sanitize is VersionedTransaction::sanitize plus the account-key checks
// of SanitizedTransaction::try_create.
func (t *wireTx) sanitize() *rpcError {
	h := t.header
	nKeys := len(t.keys)
	loaded := 0
	for _, l := range t.lookups {
		loaded += len(l.writable) + len(l.readonly)
		if len(l.writable)+len(l.readonly) == 0 {
			return errSanitize
		}
	}
	if len(t.sigs) != h.NumRequiredSignatures || h.NumRequiredSignatures == 0 ||
		h.NumRequiredSignatures > nKeys || h.NumReadonlySignedAccounts >= h.NumRequiredSignatures ||
		h.NumReadonlyUnsignedAccounts+h.NumRequiredSignatures > nKeys || nKeys+loaded > 256 {
		return errSanitize
	}
	for _, in := range t.instrs {
		if in.program == 0 || in.program >= nKeys {
			return errSanitize
		}
		for _, a := range in.accounts {
			if a >= nKeys+loaded {
				return errSanitize
			}
		}
	}
	seen := map[string]bool{}
	for _, k := range t.keys {
		if seen[k] {
			return invalidParams2("invalid transaction: Account loaded twice")
		}
		seen[k] = true
	}
	return nil
}

// verify checks every signature: signature i is key i's ed25519 signature
// of the message.
func (t *wireTx) verify() bool {
	for i, s := range t.sigs {
		k, err := base58.Decode(t.keys[i])
		if err != nil || !ed25519.Verify(ed25519.PublicKey(k), t.message, s) {
			return false
		}
	}
	return true
}

// isSigner and isWritable are the message's account flags (reserved keys
// are never writable).
func (t *wireTx) isSigner(i int) bool { return i < t.header.NumRequiredSignatures }

func (t *wireTx) isWritable(i int) bool {
	h := t.header
	var w bool
	switch {
	case i >= len(t.keys):
		return false // lookup-table keys: the fake has no tables
	case i < h.NumRequiredSignatures:
		w = i < h.NumRequiredSignatures-h.NumReadonlySignedAccounts
	default:
		w = i < len(t.keys)-h.NumReadonlyUnsignedAccounts
	}
	return w && !reserved[t.keys[i]] && programs[t.keys[i]] == ""
}

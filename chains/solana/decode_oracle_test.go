package solana

// This file is the reference decoder used as an oracle by the tests: the
// same rules implemented with encoding/json. Production code uses the
// single-pass scanner in decode.go; FuzzDecoderAgreement checks both agree.

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// key58Std is a public key as the node wrote it (base58 text), held inline so
// that decoding a block allocates nothing per account. It accepts both shapes
// agave uses: a plain string ("json" encoding, loadedAddresses) and the
// annotated object {"pubkey":…,"signer":…,"source":…,"writable":…}
// (transactionDetails "accounts", "jsonParsed").
type key58Std struct {
	n uint8
	b [maxKey58]byte
}

func (k *key58Std) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '{' {
		v, ok := objectStringStd(data, `"pubkey"`)
		if !ok {
			return errors.New("account object without a pubkey string")
		}
		data = v
	} else {
		if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
			return fmt.Errorf("account key %.60s is not a string", data)
		}
		data = data[1 : len(data)-1]
	}
	if len(data) == 0 || len(data) > maxKey58 || bytes.IndexByte(data, '\\') >= 0 {
		return fmt.Errorf("account key %q is not base58", data)
	}
	k.n = uint8(copy(k.b[:], data))
	return nil
}

func (k *key58Std) text() string { return string(k.b[:k.n]) }

// decode returns the 32-byte key.
func (k *key58Std) decode() (sol.PublicKey, error) {
	return sol.PublicKeyFromBase58(k.text())
}

// objectString returns the string value of key (quoted) in a flat, already
// validated JSON object. A quoted word followed by ':' is always a key, so the
// first such match is the member.
func objectStringStd(obj []byte, key string) ([]byte, bool) {
	for rest := obj; ; {
		i := bytes.Index(rest, []byte(key))
		if i < 0 {
			return nil, false
		}
		rest = rest[i+len(key):]
		j := 0
		for j < len(rest) && isSpaceStd(rest[j]) {
			j++
		}
		if j == len(rest) || rest[j] != ':' {
			continue
		}
		j++
		for j < len(rest) && isSpaceStd(rest[j]) {
			j++
		}
		if j == len(rest) || rest[j] != '"' {
			return nil, false
		}
		end := bytes.IndexByte(rest[j+1:], '"')
		if end < 0 {
			return nil, false
		}
		return rest[j+1 : j+1+end], true
	}
}

func isSpaceStd(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// sig58Std is a transaction signature as base58 text, held inline.
type sig58Std struct {
	n uint8
	b [maxSig58]byte
}

func (s *sig58Std) UnmarshalJSON(data []byte) error {
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return fmt.Errorf("signature %.100s is not a string", data)
	}
	data = data[1 : len(data)-1]
	if len(data) == 0 || len(data) > maxSig58 || bytes.IndexByte(data, '\\') >= 0 {
		return fmt.Errorf("signature %q is not base58", data)
	}
	s.n = uint8(copy(s.b[:], data))
	return nil
}

func (s *sig58Std) text() string { return string(s.b[:s.n]) }

// errFieldStd records whether meta.err is present and anything but null,
// without keeping it. (encoding/json calls UnmarshalJSON for null too, on a
// non-pointer field.)
type errFieldStd struct {
	present, failed bool
}

func (f *errFieldStd) UnmarshalJSON(data []byte) error {
	f.present, f.failed = true, string(data) != "null"
	return nil
}

// txMetaStd is the part of a transaction's status meta paywatch reads. In
// "accounts" mode agave sends err, status, fee, pre/postBalances and
// pre/postTokenBalances only; "json" mode adds loadedAddresses.
type txMetaStd struct {
	Err             errFieldStd `json:"err"`
	PreBalances     []uint64    `json:"preBalances"`
	PostBalances    []uint64    `json:"postBalances"`
	LoadedAddresses *struct {
		Writable []key58Std `json:"writable"`
		Readonly []key58Std `json:"readonly"`
	} `json:"loadedAddresses"`
}

// txBodyStd is the "transaction" member: either the accounts-mode list
// {"signatures","accountKeys":[objects]} or the json-mode transaction
// {"signatures","message":{"accountKeys":[strings],…}}.
type txBodyStd struct {
	Signatures  []sig58Std `json:"signatures"`
	AccountKeys []key58Std `json:"accountKeys"`
	Message     *struct {
		AccountKeys []key58Std `json:"accountKeys"`
	} `json:"message"`
}

// txWithMetaStd is one element of getBlock's "transactions" or the result of
// getTransaction (which adds slot and blockTime).
type txWithMetaStd struct {
	Meta        *txMetaStd `json:"meta"`
	Transaction txBodyStd  `json:"transaction"`
	Slot        *uint64    `json:"slot"`
	BlockTime   *int64     `json:"blockTime"`
}

// blockResultStd is getBlock's result.
type blockResultStd struct {
	BlockTime         *int64          `json:"blockTime"`
	Blockhash         string          `json:"blockhash"`
	ParentSlot        *uint64         `json:"parentSlot"`
	PreviousBlockhash string          `json:"previousBlockhash"`
	Transactions      []txWithMetaStd `json:"transactions"`
}

// credits appends to out a transfer for every watched account of tx whose
// balance rose, in account-index order. A failed transaction (meta.err not
// null) credits nothing: only its fee moved.
//
// Account order is agave's AccountKeys: static message keys, then
// loadedAddresses.writable, then loadedAddresses.readonly. In accounts mode
// the annotated list already holds all of them (source "lookupTable") and
// meta has no loadedAddresses; in json mode the loaded keys come from meta.
// The combined list must be exactly as long as the balance arrays.
func creditsStd(tx *txWithMetaStd, w chains.Watched, out []chains.Transfer) ([]chains.Transfer, error) {
	m := tx.Meta
	if m == nil {
		return out, errors.New("transaction without status meta")
	}
	if !m.Err.present {
		return out, errors.New("meta without err member")
	}
	if len(tx.Transaction.Signatures) == 0 {
		return out, errors.New("transaction without signatures")
	}
	if len(m.PreBalances) != len(m.PostBalances) {
		return out, fmt.Errorf("transaction %s: %d preBalances but %d postBalances",
			tx.Transaction.Signatures[0].text(), len(m.PreBalances), len(m.PostBalances))
	}
	if (tx.Transaction.Message != nil) == (tx.Transaction.AccountKeys != nil) {
		return out, errors.New("transaction needs exactly one of message or accountKeys")
	}
	if m.Err.failed {
		return out, nil
	}
	static := tx.Transaction.AccountKeys
	if tx.Transaction.Message != nil {
		static = tx.Transaction.Message.AccountKeys
	}
	var writable, readonly []key58Std
	if m.LoadedAddresses != nil {
		writable, readonly = m.LoadedAddresses.Writable, m.LoadedAddresses.Readonly
	}
	n := len(m.PreBalances)
	switch {
	case len(static) == n:
		// Accounts mode (lookup keys included) or a tx without lookups.
		writable, readonly = nil, nil
	case len(static)+len(writable)+len(readonly) == n:
	default:
		return out, fmt.Errorf("transaction %s: %d account keys (+%d loaded) for %d balances",
			tx.Transaction.Signatures[0].text(), len(static), len(writable)+len(readonly), n)
	}
	for i := 0; i < n; i++ {
		if m.PostBalances[i] <= m.PreBalances[i] {
			continue
		}
		var k *key58Std
		switch {
		case i < len(static):
			k = &static[i]
		case i < len(static)+len(writable):
			k = &writable[i-len(static)]
		default:
			k = &readonly[i-len(static)-len(writable)]
		}
		pk, err := k.decode()
		if err != nil {
			return out, fmt.Errorf("transaction %s account %d: %w", tx.Transaction.Signatures[0].text(), i, err)
		}
		if !w.Contains(pk[:]) {
			continue
		}
		if !isBase58([]byte(tx.Transaction.Signatures[0].text())) {
			return out, fmt.Errorf("signature %q is not base58", tx.Transaction.Signatures[0].text())
		}
		key := make([]byte, len(pk))
		copy(key, pk[:])
		out = append(out, chains.Transfer{
			TxID:    tx.Transaction.Signatures[0].text(),
			Index:   int64(i),
			Asset:   payment.Native,
			Key:     key,
			Address: pk.String(),
			Amount:  new(big.Int).SetUint64(m.PostBalances[i] - m.PreBalances[i]),
		})
	}
	return out, nil
}

// decodeBlock turns a getBlock JSON-RPC response body into a chains.Block
// holding the credits to watched keys. RPC errors come back as *RPCError for
// the caller to classify; everything malformed wraps chains.ErrInvalidResponse
// naming the slot.
func decodeBlockStd(slot uint64, body []byte, w chains.Watched) (chains.Block, error) {
	invalid := func(err error) error {
		return fmt.Errorf("solana: getBlock %d: %w: %w", slot, chains.ErrInvalidResponse, err)
	}
	var res blockResultStd
	found, err := decodeEnvelope("getBlock", body, &res, invalid)
	if err != nil {
		return chains.Block{}, err
	}
	if !found {
		return chains.Block{}, fmt.Errorf("solana: getBlock %d: node returned null: %w", slot, ErrTransient)
	}
	if res.Blockhash == "" || res.PreviousBlockhash == "" || res.ParentSlot == nil {
		return chains.Block{}, invalid(errors.New("missing blockhash, previousBlockhash or parentSlot"))
	}
	if _, err := sol.HashFromBase58(res.Blockhash); err != nil {
		return chains.Block{}, invalid(fmt.Errorf("blockhash %q: %w", res.Blockhash, err))
	}
	b := chains.Block{BlockRef: chains.BlockRef{Height: chains.Height(slot), Hash: res.Blockhash, Parent: res.PreviousBlockhash}}
	if res.BlockTime != nil {
		b.Time = time.Unix(*res.BlockTime, 0).UTC()
	}
	for i := range res.Transactions {
		if b.Transfers, err = creditsStd(&res.Transactions[i], w, b.Transfers); err != nil {
			return chains.Block{}, invalid(fmt.Errorf("transaction %d: %w", i, err))
		}
	}
	return b, nil
}

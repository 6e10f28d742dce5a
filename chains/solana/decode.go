package solana

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// Base58 text of a 32-byte public key is at most 44 characters, of a 64-byte
// signature at most 88.
const (
	maxKey58 = 44
	maxSig58 = 88
)

// txScratch is one transaction as read from getBlock's "transactions" or
// getTransaction's result: sub-slices of the body, reused from one
// transaction to the next.
type txScratch struct {
	sig       []byte   // first signature (base58 text)
	nsig      int      // number of signatures
	keys      [][]byte // static keys ("json") or the annotated list ("accounts")
	loadedW   [][]byte // meta.loadedAddresses.writable ("json" only)
	loadedR   [][]byte // meta.loadedAddresses.readonly
	pre, post []uint64
	meta      bool // meta was an object
	errSeen   bool // meta.err present
	failed    bool // meta.err not null
	message   bool // "json" form (transaction.message)
	annotated bool // "accounts" form (transaction.accountKeys)
	slot      uint64
	hasSlot   bool
	blockTime int64
	hasTime   bool
}

func (t *txScratch) reset() {
	*t = txScratch{keys: t.keys[:0], loadedW: t.loadedW[:0], loadedR: t.loadedR[:0], pre: t.pre[:0], post: t.post[:0]}
}

// keyText reads one account key string and checks its shape (1 to 44
// characters, no escapes); its base58 value is checked when it is used.
func (s *scanner) keyText() ([]byte, error) {
	v, err := s.str()
	if err == nil && (len(v) == 0 || len(v) > maxKey58 || bytes.IndexByte(v, '\\') >= 0) {
		err = fmt.Errorf("account key %q is not base58", v)
	}
	return v, err
}

// readStrings appends the account keys of an array to dst.
func (s *scanner) readStrings(dst [][]byte) ([][]byte, error) {
	if s.null() {
		return dst, nil
	}
	err := s.array(func() error {
		v, err := s.keyText()
		dst = append(dst, v)
		return err
	})
	return dst, err
}

func (s *scanner) readU64s(dst []uint64) ([]uint64, error) {
	if s.null() {
		return dst, nil
	}
	err := s.array(func() error {
		v, err := s.u64()
		dst = append(dst, v)
		return err
	})
	return dst, err
}

// readKeys appends an account-key list: base58 strings, or objects with a
// "pubkey" member (agave's ParsedAccount).
func (s *scanner) readKeys(dst [][]byte) ([][]byte, error) {
	err := s.array(func() error {
		if s.peek() == '"' {
			v, err := s.keyText()
			dst = append(dst, v)
			return err
		}
		var pubkey []byte
		err := s.object(func(key []byte) error {
			if string(key) == "pubkey" {
				v, err := s.keyText()
				pubkey = v
				return err
			}
			return s.skip(0)
		})
		if err == nil && pubkey == nil {
			err = errors.New("account without pubkey")
		}
		dst = append(dst, pubkey)
		return err
	})
	return dst, err
}

// readTx reads one transaction-with-meta object into t.
func (s *scanner) readTx(t *txScratch) error {
	t.reset()
	return s.object(func(key []byte) error {
		switch string(key) {
		case "meta":
			if s.null() {
				return nil
			}
			t.meta = true
			return s.readMeta(t)
		case "transaction":
			if s.null() {
				return nil
			}
			if s.peek() != '{' {
				return errors.New("transaction is not in a JSON encoding")
			}
			return s.readTxBody(t)
		case "slot":
			v, err := s.u64()
			t.slot, t.hasSlot = v, true
			return err
		case "blockTime":
			if s.null() {
				return nil
			}
			v, err := s.i64()
			t.blockTime, t.hasTime = v, true
			return err
		}
		return s.skip(0)
	})
}

func (s *scanner) readMeta(t *txScratch) error {
	return s.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "err":
			t.errSeen = true
			t.failed = !s.null()
			if t.failed {
				return s.skip(0)
			}
		case "preBalances":
			t.pre, err = s.readU64s(t.pre[:0])
		case "postBalances":
			t.post, err = s.readU64s(t.post[:0])
		case "loadedAddresses":
			if s.null() {
				return nil
			}
			err = s.object(func(key []byte) error {
				var err error
				switch string(key) {
				case "writable":
					t.loadedW, err = s.readStrings(t.loadedW[:0])
				case "readonly":
					t.loadedR, err = s.readStrings(t.loadedR[:0])
				default:
					err = s.skip(0)
				}
				return err
			})
		default:
			err = s.skip(0)
		}
		return err
	})
}

func (s *scanner) readTxBody(t *txScratch) error {
	return s.object(func(key []byte) error {
		switch string(key) {
		case "signatures":
			t.nsig = 0
			if s.null() {
				return nil
			}
			return s.array(func() error {
				v, err := s.str()
				if err == nil && (len(v) == 0 || len(v) > maxSig58 || bytes.IndexByte(v, '\\') >= 0) {
					err = fmt.Errorf("signature %q is not base58", v)
				}
				if t.nsig == 0 {
					t.sig = v
				}
				t.nsig++
				return err
			})
		case "accountKeys":
			// transactionDetails "accounts": annotated objects.
			if s.null() {
				return nil
			}
			t.annotated = true
			var err error
			t.keys, err = s.readKeys(t.keys[:0])
			return err
		case "message":
			if s.null() {
				return nil
			}
			t.message = true
			return s.object(func(key []byte) error {
				if string(key) == "accountKeys" {
					// Strings ("json") or annotated objects ("jsonParsed").
					var err error
					t.keys, err = s.readKeys(t.keys[:0])
					return err
				}
				return s.skip(0)
			})
		}
		return s.skip(0)
	})
}

// credit is an account of a transaction whose balance rose: a transfer
// if its key is watched. Its texts are sub-slices of the response body.
type credit struct {
	key    [32]byte
	text   []byte // the key as the node wrote it (canonical base58)
	sig    []byte
	tx     int // the transaction's position in the response
	index  int64
	amount uint64
}

// credits appends to out every account of t whose balance rose, in
// account-index order; watched picks the transfers among them. A failed
// transaction (meta.err not null) credits nothing: only its fee moved.
//
// Account order is agave's AccountKeys: static message keys, then
// loadedAddresses.writable, then loadedAddresses.readonly. In accounts mode
// the annotated list already holds all of them (source "lookupTable") and
// meta has no loadedAddresses; in json mode the loaded keys come from meta.
// The combined list must be exactly as long as the balance arrays.
func credits(t *txScratch, tx int, out []credit) ([]credit, error) {
	switch {
	case !t.meta:
		return out, errors.New("transaction without status meta")
	case !t.errSeen:
		return out, errors.New("meta without err member")
	case t.nsig == 0:
		return out, errors.New("transaction without signatures")
	case t.message == t.annotated:
		return out, errors.New("transaction needs exactly one of message or accountKeys")
	case len(t.pre) != len(t.post):
		return out, fmt.Errorf("transaction %s: %d preBalances but %d postBalances", t.sig, len(t.pre), len(t.post))
	}
	if t.failed {
		return out, nil
	}
	static, writable, readonly := t.keys, t.loadedW, t.loadedR
	n := len(t.pre)
	switch {
	case len(static) == n:
		// Accounts mode (lookup keys included) or no lookups at all.
		writable, readonly = nil, nil
	case len(static)+len(writable)+len(readonly) == n:
	default:
		return out, fmt.Errorf("transaction %s: %d account keys (+%d loaded) for %d balances",
			t.sig, len(static), len(writable)+len(readonly), n)
	}
	for i := 0; i < n; i++ {
		if t.post[i] <= t.pre[i] {
			continue
		}
		var text []byte
		switch {
		case i < len(static):
			text = static[i]
		case i < len(static)+len(writable):
			text = writable[i-len(static)]
		default:
			text = readonly[i-len(static)-len(writable)]
		}
		key, ok := decodeKey58(text)
		if !ok {
			return out, fmt.Errorf("transaction %s account %d: %q is not a base58 public key", t.sig, i, text)
		}
		out = append(out, credit{key: key, text: text, sig: t.sig, tx: tx, index: int64(i), amount: t.post[i] - t.pre[i]})
	}
	return out, nil
}

// watched appends to out the transfer of every credit of cs whose key w
// watches, in the order of cs. The keys are looked up in one batch
// (chains.ContainsEach). A watched credit's signature must be base58.
func watched(cs []credit, w chains.Watched, out []chains.Transfer) ([]chains.Transfer, error) {
	if len(cs) == 0 {
		return out, nil
	}
	keys := make([][]byte, len(cs))
	for i := range cs {
		keys[i] = cs[i].key[:]
	}
	hit := make([]bool, len(cs))
	chains.ContainsEach(w, keys, hit)
	for i := range cs {
		if !hit[i] {
			continue
		}
		c := &cs[i]
		if !isBase58(c.sig) {
			return out, fmt.Errorf("transaction %d: signature %q is not base58", c.tx, c.sig)
		}
		out = append(out, chains.Transfer{
			TxID:    string(c.sig),
			Index:   c.index,
			Asset:   payment.Native,
			Key:     keys[i],
			Address: string(c.text), // canonical: decodeKey58 accepts canonical text only
			Amount:  new(big.Int).SetUint64(c.amount),
		})
	}
	return out, nil
}

// isBase58 reports whether b is only base58 characters.
func isBase58(b []byte) bool {
	for _, c := range b {
		if b58[c] == 0xff {
			return false
		}
	}
	return true
}

// readResponse reads a JSON-RPC 2.0 response, handing the scanner to result
// for a non-null "result". found is false for "result": null; the node's
// error object comes back as an *RPCError; anything malformed (including a
// failure inside result) is reported through invalid.
func readResponse(method string, body []byte, result func(s *scanner) error, invalid func(error) error) (found bool, err error) {
	s := scanner{b: body}
	var version []byte
	var rpcErr *RPCError
	sawResult := false
	err = s.object(func(key []byte) error {
		switch string(key) {
		case "jsonrpc":
			v, err := s.str()
			version = v
			return err
		case "result":
			sawResult = true
			if s.null() {
				return nil
			}
			found = true
			return result(&s)
		case "error":
			if s.null() {
				return nil
			}
			rpcErr = &RPCError{Method: method}
			return s.object(func(key []byte) error {
				switch string(key) {
				case "code":
					v, err := s.i64()
					rpcErr.Code = int(v)
					return err
				case "message":
					start := s.i
					if _, err := s.str(); err != nil {
						return err
					}
					return json.Unmarshal(bytes.TrimSpace(s.b[start:s.i]), &rpcErr.Message)
				}
				return s.skip(0)
			})
		}
		return s.skip(0)
	})
	if err == nil {
		err = s.end()
	}
	switch {
	case err != nil:
		return false, invalid(err)
	case rpcErr != nil:
		return false, rpcErr
	case string(version) != "2.0":
		return false, invalid(fmt.Errorf("jsonrpc version %q", version))
	case !sawResult:
		return false, invalid(errors.New("response has neither result nor error"))
	}
	return found, nil
}

// decodeBlock turns a getBlock JSON-RPC response body into a chains.Block
// holding the credits to watched keys. RPC errors come back as *RPCError for
// the caller to classify; everything malformed wraps chains.ErrInvalidResponse
// naming the slot.
func decodeBlock(slot uint64, body []byte, w chains.Watched) (chains.Block, error) {
	invalid := func(err error) error {
		return fmt.Errorf("solana: getBlock %d: %w: %w", slot, chains.ErrInvalidResponse, err)
	}
	b := chains.Block{BlockRef: chains.BlockRef{Height: chains.Height(slot)}}
	var hash, prev []byte
	var hasParent bool
	var tx txScratch
	var cs []credit
	found, err := readResponse("getBlock", body, func(s *scanner) error {
		return s.object(func(key []byte) error {
			var err error
			switch string(key) {
			case "blockhash":
				hash, err = s.str()
			case "previousBlockhash":
				prev, err = s.str()
			case "parentSlot":
				_, err = s.u64()
				hasParent = true
			case "blockTime":
				if !s.null() {
					var t int64
					t, err = s.i64()
					b.Time = time.Unix(t, 0).UTC()
				}
			case "transactions":
				n := 0
				err = s.array(func() error {
					if err := s.readTx(&tx); err != nil {
						return fmt.Errorf("transaction %d: %w", n, err)
					}
					var err error
					if cs, err = credits(&tx, n, cs); err != nil {
						return fmt.Errorf("transaction %d: %w", n, err)
					}
					n++
					return nil
				})
			default:
				err = s.skip(0)
			}
			return err
		})
	}, invalid)
	if err != nil {
		return chains.Block{}, err
	}
	if !found {
		return chains.Block{}, fmt.Errorf("solana: getBlock %d: node returned null: %w", slot, ErrTransient)
	}
	if hash == nil || prev == nil || !hasParent {
		return chains.Block{}, invalid(errors.New("missing blockhash, previousBlockhash or parentSlot"))
	}
	if _, ok := decodeKey58(hash); !ok {
		return chains.Block{}, invalid(fmt.Errorf("blockhash %q is not base58", hash))
	}
	if len(prev) == 0 || bytes.IndexByte(prev, '\\') >= 0 {
		return chains.Block{}, invalid(fmt.Errorf("previousBlockhash %q", prev))
	}
	if b.Transfers, err = watched(cs, w, nil); err != nil {
		return chains.Block{}, invalid(err)
	}
	b.Hash, b.Parent = string(hash), string(prev)
	return b, nil
}

// decodeTransaction reads a getTransaction response for sig into its credits
// to watched keys, with its slot and block time. found is false for null.
func decodeTransaction(sig string, body []byte, w chains.Watched) (out []SlotTransfer, slot uint64, found bool, err error) {
	invalid := func(err error) error {
		return fmt.Errorf("solana: getTransaction %s: %w: %w", sig, chains.ErrInvalidResponse, err)
	}
	var tx txScratch
	var transfers []chains.Transfer
	found, err = readResponse("getTransaction", body, func(s *scanner) error {
		if err := s.readTx(&tx); err != nil {
			return err
		}
		cs, err := credits(&tx, 0, nil)
		if err != nil {
			return err
		}
		if transfers, err = watched(cs, w, nil); err != nil {
			return err
		}
		return nil
	}, invalid)
	if err != nil || !found {
		return nil, 0, found, err
	}
	if !tx.hasSlot {
		return nil, 0, true, invalid(errors.New("result without slot"))
	}
	if string(tx.sig) != sig {
		return nil, 0, true, invalid(fmt.Errorf("first signature is %q", tx.sig))
	}
	var t time.Time
	if tx.hasTime {
		t = time.Unix(tx.blockTime, 0).UTC()
	}
	out = make([]SlotTransfer, len(transfers))
	for i, tr := range transfers {
		out[i] = SlotTransfer{Transfer: tr, Slot: tx.slot, Time: t}
	}
	return out, tx.slot, true, nil
}

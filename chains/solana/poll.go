package solana

import (
	"context"
	"fmt"
	"sort"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"

	"github.com/paywatch/paywatch/chains"
)

// signaturesLimit is getSignaturesForAddress's maximum page size.
const signaturesLimit = 1000

// SlotTransfer is a transfer found by Poll, with the slot and time of the
// block that holds it.
type SlotTransfer struct {
	chains.Transfer
	Slot uint64
	Time time.Time
}

// keySet is a chains.Watched over a few explicit keys.
type keySet map[string]struct{}

func (k keySet) Contains(key []byte) bool { _, ok := k[string(key)]; return ok }

// Poll is the address mode: for each 32-byte address it lists the finalized
// signatures newer than since[address] (base58 address → last signature
// seen; getSignaturesForAddress with "until", pages of 1000), skips failed
// transactions, reads the others with getTransaction and applies the same
// balance-delta rule as Block. It returns the credits to any of addresses,
// each once, ordered by slot, and the updated since map (the newest
// signature per address). On error nothing is returned and since stays
// valid: the caller retries with the old map.
func (c *Client) Poll(ctx context.Context, addresses [][]byte, since map[string]string) ([]SlotTransfer, map[string]string, error) {
	out, _, next, err := c.poll(ctx, addresses, since, 0, 0)
	if err != nil {
		return nil, nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Slot != out[j].Slot {
			return out[i].Slot < out[j].Slot
		}
		if out[i].TxID != out[j].TxID {
			return out[i].TxID < out[j].TxID
		}
		return out[i].Index < out[j].Index
	})
	return out, next, nil
}

// poll reads the credits to addresses newer than since, at slots at or above
// from (0: all): an address's signatures are paged only down to from and
// transactions below it are not read. With to > 0 the node must have
// reached slot to (minContextSlot): a node behind it (a lagging node behind
// a load balancer) answers -32016, which is transient, instead of a short
// list that looks like "no payments". It returns the credits in read order,
// the late ones and the updated since map. A late credit is one to an
// address listed before (since has it) whose signature is new yet lies
// below from: a node listed it only after the cursor passed its slot. It is
// read and returned apart, for the caller to rescan from its slot.
func (c *Client) poll(ctx context.Context, addresses [][]byte, since map[string]string, from, to uint64) ([]SlotTransfer, []SlotTransfer, map[string]string, error) {
	watch := make(keySet, len(addresses))
	for _, a := range addresses {
		if len(a) != sol.PublicKeyLength {
			return nil, nil, nil, fmt.Errorf("solana: poll: address of %d bytes, want %d", len(a), sol.PublicKeyLength)
		}
		watch[string(a)] = struct{}{}
	}
	next := make(map[string]string, len(since)+len(addresses))
	for k, v := range since {
		next[k] = v
	}
	seen := make(map[string]bool)
	var out, late []SlotTransfer
	for _, a := range addresses {
		addr := sol.PublicKeyFromBytes(a)
		until := since[addr.String()]
		sigs, err := c.signatures(ctx, addr, until, from, to)
		if err != nil {
			return nil, nil, nil, err
		}
		if len(sigs) > 0 {
			next[addr.String()] = sigs[0].Signature.String()
		}
		// Oldest first, so that credits come out in chain order.
		for i := len(sigs) - 1; i >= 0; i-- {
			s := sigs[i]
			sig := s.Signature.String()
			isLate := s.Slot < from && until != ""
			if s.Err != nil || (s.Slot < from && !isLate) || seen[sig] {
				continue
			}
			seen[sig] = true
			found, err := c.transaction(ctx, sig, s.Slot, watch)
			if err != nil {
				return nil, nil, nil, err
			}
			if isLate {
				late = append(late, found...)
				continue
			}
			out = append(out, found...)
		}
	}
	return out, late, next, nil
}

// signatures lists addr's finalized signatures newer than until (newest
// first), following "before" pages; with from > 0 it stops after the page
// that reaches below slot from. With to > 0 it asks the node to answer only
// once it has reached slot to (minContextSlot).
func (c *Client) signatures(ctx context.Context, addr sol.PublicKey, until string, from, to uint64) ([]*rpc.TransactionSignature, error) {
	var all []*rpc.TransactionSignature
	before := ""
	for {
		opts := rpc.M{"limit": signaturesLimit, "commitment": rpc.CommitmentFinalized}
		if until != "" {
			opts["until"] = until
		}
		if before != "" {
			opts["before"] = before
		}
		if to > 0 {
			opts["minContextSlot"] = to
		}
		var page []*rpc.TransactionSignature
		where := fmt.Sprintf("getSignaturesForAddress %s", addr)
		err := c.call(ctx, "getSignaturesForAddress", []any{addr.String(), opts}, func(body []byte) error {
			found, err := decodeEnvelope("getSignaturesForAddress", body, &page, func(err error) error {
				return fmt.Errorf("solana: %s: %w: %w", where, chains.ErrInvalidResponse, err)
			})
			if err == nil && !found {
				return fmt.Errorf("solana: %s: %w: null result", where, chains.ErrInvalidResponse)
			}
			return err
		})
		if err != nil {
			return nil, classify(err, where, 0)
		}
		for _, s := range page {
			if s == nil || s.Signature.IsZero() {
				return nil, fmt.Errorf("solana: %s: %w: empty signature entry", where, chains.ErrInvalidResponse)
			}
		}
		all = append(all, page...)
		if len(page) < signaturesLimit || (from > 0 && page[len(page)-1].Slot < from) {
			return all, nil
		}
		before = page[len(page)-1].Signature.String()
	}
}

// transaction reads one finalized transaction and returns its credits to
// watched keys.
func (c *Client) transaction(ctx context.Context, sig string, slot uint64, w chains.Watched) ([]SlotTransfer, error) {
	where := "getTransaction " + sig
	invalid := func(err error) error {
		return fmt.Errorf("solana: %s: %w: %w", where, chains.ErrInvalidResponse, err)
	}
	params := []any{sig, rpc.M{
		"commitment":                     rpc.CommitmentFinalized,
		"encoding":                       "json",
		"maxSupportedTransactionVersion": rpc.MaxSupportedTransactionVersion0,
	}}
	var out []SlotTransfer
	var got uint64
	var found bool
	err := c.call(ctx, "getTransaction", params, func(body []byte) error {
		var err error
		out, got, found, err = decodeTransaction(sig, body, w)
		return err
	})
	if err != nil {
		return nil, classify(err, where, 0)
	}
	if !found {
		// Listed as finalized but not readable yet (load-balanced nodes).
		return nil, fmt.Errorf("solana: %s: null result: %w", where, ErrTransient)
	}
	if got != slot {
		return nil, invalid(fmt.Errorf("slot %d, the signature list says %d", got, slot))
	}
	return out, nil
}

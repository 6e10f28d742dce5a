package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"

	"fmt"
	"math/big"
	"sort"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// BalanceTxID is the txid of the balance-check items found at height: with
// BalanceIndex of the address it is their natural key, so checking the same
// height twice records nothing twice.
func BalanceTxID(height int64) string { return fmt.Sprintf("balance:%d", height) }

// BalanceIndex is the transfer index of a balance-check item of key: the
// first 63 bits of sha256(key), never negative (native and traced transfers
// of real transactions use -1 and below, under real txids).
func BalanceIndex(key []byte) int64 {
	sum := sha256.Sum256(key)
	return int64(binary.BigEndian.Uint64(sum[:8]) >> 1)
}

var _ chains.BalanceSink = (*Sink)(nil)

// openAddress is an open intent's address, checked at height.
type openAddress struct {
	intentID string
	address  string
	key      []byte
	required int
}

// CheckBalances is the balance check of a network whose source can miss
// native payments. For every open intent (awaiting_payment, detected) it
// takes the height at which a transfer has the intent's confirmations
// (tips.Node − confirmations + 1, or tips.Final for finality), reads the
// address's native balance in the stored block at that height, and compares
// it with the sum of the recorded, non-orphaned native transfers to the
// address up to that height. A positive difference is recorded, in one
// transaction, as a confirmed transfer (BalanceTxID, BalanceIndex) classified
// Unexplained, with a transfer.unmatched event. A negative difference (money
// moved out of a watch-only address) is logged; it cannot be explained here.
func (s *Sink) CheckBalances(ctx context.Context, network payment.Network, tips chains.Tips, src chains.BalanceChecker) error {
	n := string(network)
	cur, err := s.store.GetCursor(ctx, n)
	if err != nil {
		return fmt.Errorf("balance check: cursor: %w", err)
	}
	open, err := s.openAddresses(ctx, n)
	if err != nil {
		return err
	}
	byHeight := map[int64][]openAddress{}
	for _, a := range open {
		h := int64(tips.Final)
		if a.required > 0 {
			h = int64(tips.Node) - int64(a.required) + 1
		}
		if h < 1 || h > cur.Height {
			continue // not deep enough yet, or no finality known
		}
		byHeight[h] = append(byHeight[h], a)
	}
	heights := make([]int64, 0, len(byHeight))
	for h := range byHeight {
		heights = append(heights, h)
	}
	sort.Slice(heights, func(i, j int) bool { return heights[i] < heights[j] })
	for _, h := range heights {
		if err := s.checkAt(ctx, n, h, byHeight[h], tips, src); err != nil {
			return err
		}
	}
	return nil
}

// checkAt checks the addresses of group in the stored block at height h.
func (s *Sink) checkAt(ctx context.Context, n string, h int64, group []openAddress, tips chains.Tips, src chains.BalanceChecker) error {
	ref, at, err := s.store.BlockWithTime(ctx, n, h)
	hash := ref.Hash
	if err != nil {
		// Below the first scanned block (or pruned): nothing to compare with.
		s.log.Debug("balance check: no stored block", "network", n, "height", h, "err", err)
		return nil
	}
	keys := make([][]byte, len(group))
	for i, a := range group {
		keys[i] = a.key
	}
	balances, err := src.NativeBalances(ctx, keys, chains.BlockRef{Height: chains.Height(h), Hash: hash})
	if err != nil {
		return fmt.Errorf("balance check at %s height %d: %w", n, h, err)
	}
	if len(balances) != len(keys) {
		return fmt.Errorf("balance check at %s height %d: %d balances for %d addresses: %w", n, h, len(balances), len(keys), chains.ErrInvalidResponse)
	}
	recorded, err := s.recordedNative(ctx, n, keys, h)
	if err != nil {
		return err
	}
	for i, a := range group {
		diff := new(big.Int).Sub(balances[i], recorded[string(a.key)])
		switch diff.Sign() {
		case 0:
			continue
		case -1:
			s.log.Warn("balance check: address holds less than its recorded transfers (moved out?)",
				"network", n, "height", h, "address", a.address, "intent", a.intentID, "missing", diff.Neg(diff).String())
			continue
		}
		seen := s.now().UTC()
		if at != nil && !at.IsZero() && at.Before(seen) {
			seen = at.UTC()
		}
		if err := s.recordUnexplained(ctx, n, a, h, hash, diff, seen, tips); err != nil {
			return err
		}
		s.log.Warn("balance check: unexplained native payment recorded for finance",
			"network", n, "height", h, "address", a.address, "intent", a.intentID, "amount", diff.String())
	}
	return nil
}

// openAddresses returns the addresses of the network's open intents.
func (s *Sink) openAddresses(ctx context.Context, n string) ([]openAddress, error) {
	rows, err := s.store.OpenAddresses(ctx, n)
	if err != nil {
		return nil, fmt.Errorf("balance check: open intents: %w", err)
	}
	out := make([]openAddress, len(rows))
	for i, r := range rows {
		out[i] = openAddress{intentID: r.IntentID, address: r.Address, key: r.Key, required: r.ConfirmationsRequired}
	}
	return out, nil
}

// recordedNative sums the recorded, non-orphaned native transfers to keys in
// blocks up to height h, by key.
func (s *Sink) recordedNative(ctx context.Context, n string, keys [][]byte, h int64) (map[string]*big.Int, error) {
	sums, err := s.store.RecordedSums(ctx, n, string(payment.Native), keys, h)
	if err != nil {
		return nil, fmt.Errorf("balance check: recorded transfers: %w", err)
	}
	return sums, nil
}

// recordUnexplained stores one balance-check item and its event in one
// transaction. The cursor lock orders it with the scanner's writes.
func (s *Sink) recordUnexplained(ctx context.Context, n string, a openAddress, h int64, hash string, amount *big.Int,
	seen time.Time, tips chains.Tips) error {
	return s.inTx(ctx, func(tx *store.Tx) error {
		now := s.now().UTC()
		cur, err := tx.CursorForUpdate(ctx, n)
		if err != nil {
			return err
		}
		if cur.Height < h {
			return fmt.Errorf("balance check at %s height %d: cursor moved back to %d", n, h, cur.Height)
		}
		in, err := tx.GetIntent(ctx, a.intentID)
		if err != nil {
			return err
		}
		rec := store.Transfer{
			ID: store.NewID("tr"), Network: n, TxID: BalanceTxID(h), Index: BalanceIndex(a.key), Asset: string(payment.Native),
			Address: a.address, AddressKey: a.key, Amount: amount, IntentID: a.intentID, BlockHeight: &h, BlockHash: hash,
			FirstSeenAt: seen, Status: payment.TransferConfirming, ConfirmationsRequired: a.required, Classification: payment.Unexplained, CreatedAt: now,
		}
		stored, inserted, err := tx.UpsertTransfer(ctx, rec)
		if err != nil {
			return fmt.Errorf("record balance-check item %s:%d: %w", rec.TxID, rec.Index, err)
		}
		if stored.Reexecuted {
			// The upsert replaced the content (rolled back with this error).
			was, err := tx.ReplacedContent(ctx, stored.ID)
			if err != nil {
				return err
			}
			return fmt.Errorf("balance-check item %s:%d exists for %s (%s), not %s (%s)", rec.TxID, rec.Index,
				was.Address, was.Amount, a.address, amount)
		}
		m := newMoves()
		if err := s.confirm(ctx, tx, n, int64(tips.Node), int64(tips.Final), now, m); err != nil {
			return err
		}
		if err := s.settle(ctx, tx, m, now); err != nil {
			return err
		}
		if !inserted {
			return nil
		}
		fresh, err := tx.GetTransfer(ctx, stored.ID)
		if err != nil {
			return err
		}
		err = tx.QueueAppendEvent(payment.EventTransferUnmatched, a.intentID, stored.ID, in.Account, views.TransferOf(fresh, int64(tips.Node)), now)
		return err
	})
}

package ingest

import (
	"context"
	"sort"
	"time"

	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// moves collects what one chain-side transaction (blocks applied, tips,
// a rewind, the mempool) changed: the intents to re-decide, and the
// transfers with a credit_account decision that left the chain or got their
// confirmations, whose credits follow them (settle). Every orphaning and
// every confirmation goes through add.
type moves struct {
	intents  map[string]bool
	credited map[string]bool
	// unknown are transfers to addresses without an intent recorded in
	// this transaction: finance items, announced at its end.
	unknown []string
}

func newMoves() *moves {
	return &moves{intents: map[string]bool{}, credited: map[string]bool{}}
}

// intent marks intents to re-decide.
func (m *moves) intent(ids ...string) {
	for _, id := range ids {
		if id != "" {
			m.intents[id] = true
		}
	}
}

// add notes transfers that were orphaned, re-recorded or confirmed.
func (m *moves) add(trs []store.Transfer) {
	for _, t := range trs {
		m.intent(t.IntentID)
		for _, r := range t.Resolutions {
			if r.Action == finance.ActionCreditAccount {
				m.credited[t.ID] = true
			}
		}
	}
}

// settle re-decides the affected intents, then brings the credit_account
// credits of the moved transfers in line with the chain, in the caller's
// transaction (events last).
func (s *Sink) settle(ctx context.Context, tx *store.Tx, m *moves, now time.Time) error {
	if err := s.reevaluateAll(ctx, tx, m.intents, now); err != nil {
		return err
	}
	ids := make([]string, 0, len(m.credited))
	for id := range m.credited {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := s.credits.FollowChain(ctx, tx, id, now); err != nil {
			return err
		}
	}
	for _, id := range m.unknown {
		t, err := tx.GetTransfer(ctx, id)
		if err != nil {
			return err
		}
		tip, err := tx.NodeHeight(ctx, t.Network)
		if err != nil {
			return err
		}
		if err := tx.QueueAppendEvent(payment.EventTransferUnmatched, "", t.ID, "", views.TransferOf(t, tip), now); err != nil {
			return err
		}
	}
	return nil
}

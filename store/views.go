package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// batchSender sends a batch in one round trip: the pool outside a
// transaction, the transaction's connection inside one.
type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// IntentView returns an intent, its transfers in first-seen order and its
// network's node height (what GetIntent, TransfersByIntent and NodeHeight
// answer) in one round trip; ErrNotFound when there is no such intent.
func (s *Store) IntentView(ctx context.Context, id string) (Intent, []Transfer, int64, error) {
	return intentView(ctx, s.pool, id)
}

// IntentView is Store.IntentView inside the transaction.
func (t *Tx) IntentView(ctx context.Context, id string) (Intent, []Transfer, int64, error) {
	return intentView(ctx, t.tx, id)
}

func intentView(ctx context.Context, q batchSender, id string) (in Intent, trs []Transfer, tip int64, err error) {
	b := &pgx.Batch{}
	b.Queue(`SELECT `+intentColumns+intentFrom+`WHERE i.id = $1`, id)
	b.Queue(`SELECT `+transferColumns+transferFrom+`WHERE t.intent_id = $1 ORDER BY t.first_seen_at, t.id`, id)
	b.Queue(`SELECT coalesce((SELECT c.node_height FROM cursors c JOIN intents i ON i.network = c.network WHERE i.id = $1), 0)`, id)
	br := q.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			err = translate(cerr)
		}
	}()
	if in, err = scanIntent(br.QueryRow()); err != nil {
		return Intent{}, nil, 0, err
	}
	rows, err := br.Query()
	if err != nil {
		return Intent{}, nil, 0, translate(err)
	}
	if trs, err = scanTransfers(rows); err != nil {
		return Intent{}, nil, 0, err
	}
	if err = br.QueryRow().Scan(&tip); err != nil {
		return Intent{}, nil, 0, translate(err)
	}
	return in, trs, tip, nil
}

// TransferView returns a transfer and its network's node height (what
// GetTransfer and NodeHeight answer) in one round trip; ErrNotFound when
// there is no such transfer.
func (s *Store) TransferView(ctx context.Context, id string) (tr Transfer, tip int64, err error) {
	b := &pgx.Batch{}
	b.Queue(`SELECT `+transferColumns+transferFrom+`WHERE t.id = $1`, id)
	b.Queue(`SELECT coalesce((SELECT c.node_height FROM cursors c JOIN transfers t ON t.network = c.network WHERE t.id = $1), 0)`, id)
	br := s.pool.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			err = translate(cerr)
		}
	}()
	if tr, err = scanTransfer(br.QueryRow()); err != nil {
		return Transfer{}, 0, err
	}
	if err = br.QueryRow().Scan(&tip); err != nil {
		return Transfer{}, 0, translate(err)
	}
	return tr, tip, nil
}

// NodeHeights returns the node height last recorded for every network
// with a cursor, in one query (NodeHeight's answer for each; a network
// without a cursor has none: 0).
func (s *Store) NodeHeights(ctx context.Context) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT network, node_height FROM cursors`)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var n string
		var h int64
		if err := rows.Scan(&n, &h); err != nil {
			return nil, translate(err)
		}
		out[n] = h
	}
	return out, translate(rows.Err())
}

// IntentsAndTransfersOfPayableForUpdate is IntentsOfPayableForUpdate and
// TransfersOfIntents of those intents in one round trip: the intents are
// locked by the first statement before the second reads their transfers
// (the caller holds the payable's lock, so the payable has no other
// intent).
func (t *Tx) IntentsAndTransfersOfPayableForUpdate(ctx context.Context, payableID int64) (ins []Intent, trs []Transfer, err error) {
	b := &pgx.Batch{}
	b.Queue(`SELECT `+intentColumns+intentFrom+`WHERE i.payable_id = $1 ORDER BY i.created_at, i.id FOR UPDATE OF i`, payableID)
	b.Queue(`SELECT `+transferColumns+transferFrom+`WHERE t.intent_id IN (SELECT id FROM intents WHERE payable_id = $1)
		ORDER BY t.recorded`, payableID)
	br := t.tx.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			err = translate(cerr)
		}
	}()
	rows, err := br.Query()
	if err != nil {
		return nil, nil, translate(err)
	}
	if ins, err = scanIntents(rows); err != nil {
		return nil, nil, err
	}
	if rows, err = br.Query(); err != nil {
		return nil, nil, translate(err)
	}
	if trs, err = scanTransfers(rows); err != nil {
		return nil, nil, err
	}
	return ins, trs, nil
}

package store

import "context"

// MaxTransferHeight returns the highest block height holding a recorded
// transfer of network, and false when the network has none.
func (t *Tx) MaxTransferHeight(ctx context.Context, network string) (int64, bool, error) {
	var h *int64
	err := t.tx.QueryRow(ctx, `SELECT max(block_height) FROM transfers WHERE network = $1`, network).Scan(&h)
	if err != nil || h == nil {
		return 0, false, translate(err)
	}
	return *h, true, nil
}

// ForgetScanState deletes network's cursor and its recent block refs, so
// that its scanner starts again at the node's tip. Intents, transfers,
// payments and the ledger are untouched. Only the local sandbox calls it,
// when a throwaway chain was replaced by a new one; a production daemon
// never does: a vanished chain there is a reorg deeper than the safety
// depth, reported as critical.
func (t *Tx) ForgetScanState(ctx context.Context, network string) error {
	if _, err := t.tx.Exec(ctx, `DELETE FROM blocks WHERE network = $1`, network); err != nil {
		return translate(err)
	}
	_, err := t.tx.Exec(ctx, `DELETE FROM cursors WHERE network = $1`, network)
	return translate(err)
}

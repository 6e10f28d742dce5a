package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/payment"
)

// Transfer is money observed arriving at one of our addresses.
type Transfer struct {
	ID string
	// Store is the store of the address it pays (set by the database).
	Store                 string
	Network               string
	TxID                  string
	Index                 int64
	Asset                 string
	Address               string
	AddressKey            []byte
	Amount                *big.Int
	IntentID              string
	BlockHeight           *int64
	BlockHash             string
	FirstSeenAt           time.Time
	Status                payment.TransferStatus
	ConfirmationsRequired int
	// Coinbase marks an output of a coinbase transaction: it pays only
	// after payment.CoinbaseMaturity confirmations.
	Coinbase       bool
	ConfirmedAt    *time.Time
	Classification payment.Classification
	Credited       bool
	NotifiedClass  payment.Classification
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// Recorded is where the transfer stands in the order paywatch recorded
	// transfers in (a sequence shared with credit_intent decisions).
	Recorded int64
	// Settled is the part of Amount that pays its intent (the matcher's
	// decision); Resolved the part finance's live decisions other than
	// credit_intent cover. Amount − Settled − Resolved is unresolved.
	Settled, Resolved *big.Int
	// Resolutions are finance's live decisions on the transfer, oldest
	// first (a voided credit_intent is history); Resolution is the newest
	// of them, nil when there is none.
	Resolutions []Resolution
	Resolution  *Resolution
	// ScannedBy is the pool endpoint that served the block the transfer
	// was last seen in ("" with one rpc_url, or unknown).
	ScannedBy string
	// Verify is what the second source found (issue 33 item 5); its
	// State is "" until the verifier looked, and cleared by a new block
	// or new content.
	Verify Verification
	// Reexecuted is set by UpsertTransfer when the transaction, seen
	// again, moved another amount, asset or address than the stored row
	// said: the row now holds the best chain's content.
	Reexecuted bool
}

// Unresolved is the part of the transfer that neither pays its intent nor
// is covered by a finance decision: what finance still has to decide.
func (t Transfer) Unresolved() *big.Int {
	u := new(big.Int).Set(t.Amount)
	if t.Settled != nil {
		u.Sub(u, t.Settled)
	}
	if t.Resolved != nil {
		u.Sub(u, t.Resolved)
	}
	if u.Sign() < 0 {
		u.SetInt64(0)
	}
	return u
}

// CountsFrom is where the transfer stands in the record order for its
// intent: where it was recorded, or, credited by finance, where its live
// credit_intent decision was.
func (t Transfer) CountsFrom() int64 {
	for i := range t.Resolutions {
		if r := &t.Resolutions[i]; r.Action == "credit_intent" && t.Credited {
			return r.Recorded
		}
	}
	return t.Recorded
}

// Resolution is finance's decision on a transfer.
type Resolution struct {
	Seq         int64
	Action      string
	Note        string
	Actor       string
	IntentID    string
	Account     string
	AmountCents *int64
	RefundTxID  string
	// Covers is what the decision covers in base units: the whole transfer
	// or the surplus it had on top of what paid its intent (nil for
	// credit_intent, which makes the transfer count for an intent instead).
	Covers    *big.Int
	CreatedAt time.Time
	// Recorded is where the decision stands in the record order.
	Recorded int64
	// USDPerUnit is the rate a credit_account used (a decimal), and
	// ReferenceUSDPerUnit the rate book's quote at the transfer's time it
	// was checked against ("" when there was none). OverrideReason is
	// set when the rate was outside the bound (an override).
	USDPerUnit          string
	ReferenceUSDPerUnit string
	OverrideReason      string
}

// resolutionsJSON aggregates a transfer's live resolutions, oldest first.
const resolutionsJSON = `(SELECT json_agg(json_build_object('seq', r.seq, 'action', r.action, 'note', r.note, 'actor', r.actor,
		'intent_id', r.intent_id, 'account', r.account, 'amount_cents', r.amount_cents, 'refund_txid', r.refund_txid,
		'covers', r.covers::text, 'created_at', r.created_at, 'recorded', r.recorded, 'usd_per_unit', r.usd_per_unit::text,
		'reference_usd_per_unit', r.reference_usd_per_unit::text, 'override_reason', r.override_reason) ORDER BY r.seq)
	FROM resolutions r WHERE r.transfer_id = t.id AND r.voided_at IS NULL)`

const transferColumns = `t.id, t.network, t.txid, t.idx, t.asset, t.address, t.address_key, t.amount::text,
	coalesce(t.intent_id, ''), t.block_height, coalesce(t.block_hash, ''), t.first_seen_at, t.status,
	t.confirmations_required, t.confirmed_at, t.classification, t.credited, coalesce(t.notified_class, ''), t.created_at, t.updated_at,
	t.recorded, t.settled::text, t.resolved::text, t.coinbase, t.store_id, t.scanned_by, coalesce(t.verify_state, ''), t.verify_endpoint,
	t.verify_detail, t.verify_checked_at, ` + resolutionsJSON

const transferFrom = ` FROM transfers t `

// resolutionRow is a resolution as resolutionsJSON renders it.
type resolutionRow struct {
	Seq         int64     `json:"seq"`
	Action      string    `json:"action"`
	Note        string    `json:"note"`
	Actor       string    `json:"actor"`
	IntentID    *string   `json:"intent_id"`
	Account     *string   `json:"account"`
	AmountCents *int64    `json:"amount_cents"`
	RefundTxID  *string   `json:"refund_txid"`
	Covers      *string   `json:"covers"`
	CreatedAt   time.Time `json:"created_at"`
	Recorded    int64     `json:"recorded"`
	USDPerUnit  *string   `json:"usd_per_unit"`
	Reference   *string   `json:"reference_usd_per_unit"`
	Override    *string   `json:"override_reason"`
}

func scanTransfer(row pgx.Row) (Transfer, error) {
	var tr Transfer
	var amount, settled, resolved string
	var res []byte
	err := row.Scan(&tr.ID, &tr.Network, &tr.TxID, &tr.Index, &tr.Asset, &tr.Address, &tr.AddressKey, &amount,
		&tr.IntentID, &tr.BlockHeight, &tr.BlockHash, &tr.FirstSeenAt, &tr.Status,
		&tr.ConfirmationsRequired, &tr.ConfirmedAt, &tr.Classification, &tr.Credited, &tr.NotifiedClass, &tr.CreatedAt, &tr.UpdatedAt,
		&tr.Recorded, &settled, &resolved, &tr.Coinbase, &tr.Store, &tr.ScannedBy, &tr.Verify.State, &tr.Verify.Endpoint,
		&tr.Verify.Detail, &tr.Verify.CheckedAt, &res)
	if err != nil {
		return Transfer{}, translate(err)
	}
	if tr.Amount, err = parseNum(amount); err != nil {
		return Transfer{}, err
	}
	if tr.Settled, err = parseNum(settled); err != nil {
		return Transfer{}, err
	}
	if tr.Resolved, err = parseNum(resolved); err != nil {
		return Transfer{}, err
	}
	if len(res) > 0 {
		var rows []resolutionRow
		if err := json.Unmarshal(res, &rows); err != nil {
			return Transfer{}, fmt.Errorf("transfer %s resolutions: %w", tr.ID, err)
		}
		for _, r := range rows {
			v := Resolution{Seq: r.Seq, Action: r.Action, Note: r.Note, Actor: r.Actor, IntentID: deref(r.IntentID),
				Account: deref(r.Account), AmountCents: r.AmountCents, RefundTxID: deref(r.RefundTxID), CreatedAt: r.CreatedAt.UTC(),
				Recorded: r.Recorded, USDPerUnit: deref(r.USDPerUnit), ReferenceUSDPerUnit: deref(r.Reference),
				OverrideReason: deref(r.Override)}
			if r.Covers != nil {
				if v.Covers, err = parseNum(*r.Covers); err != nil {
					return Transfer{}, err
				}
			}
			tr.Resolutions = append(tr.Resolutions, v)
		}
		tr.Resolution = &tr.Resolutions[len(tr.Resolutions)-1]
	}
	return tr, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func scanTransfers(rows pgx.Rows) ([]Transfer, error) {
	defer rows.Close()
	var out []Transfer
	for rows.Next() {
		tr, err := scanTransfer(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, tr)
	}
	return out, translate(rows.Err())
}

// UpsertTransfer records a transfer on its natural key (network, txid,
// index), a function of the transaction alone (its hash and a position
// inside it). A transfer seen again (mempool, then block; orphaned, then
// re-mined) keeps its id, first-seen time, record order and decisions; its
// block and status are updated, except that a confirmed transfer seen
// again in the same block (a rescan replays it) stays confirmed: its depth
// did not change, whatever tip the node reports meanwhile.
//
// Its content is the latest observation's: a transaction mined again that
// executed against other state (issue 32 item 2) may move another amount,
// asset or address under the same key. Then the amount, asset and address
// are replaced (the old content goes to transfer_contents), the transfer
// moves to the new address's intent unless finance credited it to one,
// what was settled or resolved is cut to the new amount, and the returned
// row has Reexecuted set: the caller decides it again and voids finance's
// decisions on the old content.
//
// An Ethereum token transfer stored before migration 0025 under its block
// log index (idx ≥ LegacyIndexBase) is re-keyed in place by the first
// upsert of its transaction, asset and address under the tx-local key.
//
// It returns the stored row and whether it is new.
func (t *Tx) UpsertTransfer(ctx context.Context, tr Transfer) (Transfer, bool, error) {
	if tr.Network == string(payment.Ethereum) && tr.Index >= 0 && tr.Index < LegacyIndexBase {
		if _, err := t.tx.Exec(ctx, `UPDATE transfers SET idx = $4
			WHERE id = (SELECT id FROM transfers WHERE network = $1 AND txid = $2 AND idx >= $6 AND asset = $3 AND address_key = $5
				ORDER BY idx LIMIT 1)
			AND NOT EXISTS (SELECT 1 FROM transfers WHERE network = $1 AND txid = $2 AND idx = $4)`,
			tr.Network, tr.TxID, tr.Asset, tr.Index, tr.AddressKey, LegacyIndexBase); err != nil {
			return Transfer{}, false, translate(err)
		}
	}
	var id string
	var inserted, reexecuted bool
	// old is the stored row as the statement starts: whether its content
	// changed is told by comparing it with what the upsert left.
	err := t.tx.QueryRow(ctx, `WITH old AS (SELECT amount, asset, address_key FROM transfers WHERE network = $2 AND txid = $3 AND idx = $4),
		up AS (INSERT INTO transfers (id, network, txid, idx, asset, address, address_key, amount,
		intent_id, block_height, block_hash, first_seen_at, status, confirmations_required, classification, notified_class, created_at, updated_at, coinbase, scanned_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8::numeric, NULLIF($9, ''), $10, NULLIF($11, ''), $12, $13, $14, $15, NULLIF($17, ''), $16, $16, $18, $19)
		ON CONFLICT (network, txid, idx) DO UPDATE SET
			block_height = EXCLUDED.block_height, block_hash = EXCLUDED.block_hash,
			status = CASE WHEN `+sameConfirmedBlock+` THEN transfers.status ELSE EXCLUDED.status END,
			updated_at = EXCLUDED.updated_at,
			confirmed_at = CASE WHEN EXCLUDED.status = 'confirmed' OR `+sameConfirmedBlock+` THEN transfers.confirmed_at ELSE NULL END,
			amount = EXCLUDED.amount, asset = EXCLUDED.asset, address = EXCLUDED.address, address_key = EXCLUDED.address_key,
			intent_id = CASE WHEN `+movedAway+` THEN EXCLUDED.intent_id ELSE transfers.intent_id END,
			confirmations_required = CASE WHEN `+movedAway+` THEN EXCLUDED.confirmations_required ELSE transfers.confirmations_required END,
			classification = CASE WHEN `+movedAway+` THEN EXCLUDED.classification ELSE transfers.classification END,
			notified_class = CASE WHEN `+movedAway+` THEN EXCLUDED.notified_class ELSE transfers.notified_class END,
			settled = CASE WHEN `+movedAway+` THEN 0 ELSE LEAST(transfers.settled, EXCLUDED.amount) END,
			resolved = LEAST(transfers.resolved, EXCLUDED.amount - CASE WHEN `+movedAway+` THEN 0 ELSE LEAST(transfers.settled, EXCLUDED.amount) END),
			reexecuted_at = CASE WHEN `+otherContent+` THEN EXCLUDED.updated_at ELSE transfers.reexecuted_at END,
			scanned_by = CASE WHEN EXCLUDED.block_hash IS NULL THEN transfers.scanned_by ELSE EXCLUDED.scanned_by END,
			verify_state = CASE WHEN `+unverified+` THEN NULL ELSE transfers.verify_state END
		RETURNING id, (xmax = 0) AS inserted, amount, asset, address_key)
		SELECT up.id, up.inserted,
			coalesce(old.amount IS NOT NULL AND (old.amount, old.asset, old.address_key) IS DISTINCT FROM (up.amount, up.asset, up.address_key), FALSE)
		FROM up LEFT JOIN old ON TRUE`,
		tr.ID, tr.Network, tr.TxID, tr.Index, tr.Asset, tr.Address, tr.AddressKey, num(tr.Amount),
		tr.IntentID, tr.BlockHeight, tr.BlockHash, tr.FirstSeenAt, tr.Status, tr.ConfirmationsRequired,
		tr.Classification, tr.CreatedAt, tr.NotifiedClass, tr.Coinbase, tr.ScannedBy).Scan(&id, &inserted, &reexecuted)
	if err != nil {
		return Transfer{}, false, translate(err)
	}
	stored, err := t.GetTransfer(ctx, id)
	stored.Reexecuted = reexecuted
	return stored, inserted, err
}

// LegacyIndexBase is added by migration 0025 to the idx of Ethereum token
// transfers stored under their block log index; UpsertTransfer re-keys such
// a row when its transaction is seen again.
const LegacyIndexBase int64 = 1 << 40

// otherContent is true in UpsertTransfer's conflict branch when the
// transaction, seen again, moved another amount, asset or address.
const otherContent = `(transfers.amount <> EXCLUDED.amount OR transfers.asset <> EXCLUDED.asset OR transfers.address_key <> EXCLUDED.address_key)`

// unverified is true in UpsertTransfer's conflict branch when what a
// verifier confirmed no longer holds: the transfer is in another block (a
// reorg; the mempool's sighting keeps it) or moved other content.
const unverified = `((EXCLUDED.block_hash IS NOT NULL AND transfers.block_hash IS DISTINCT FROM EXCLUDED.block_hash) OR ` + otherContent + `)`

// movedAway is true in UpsertTransfer's conflict branch when the transfer
// now pays another address and finance did not credit it to an intent: it
// belongs to the new address's intent (or none).
const movedAway = `(transfers.address_key <> EXCLUDED.address_key AND NOT transfers.credited)`

// ReplacedContent returns the content a transfer had before its latest
// re-execution (its intent then): what an orphaned block said of it.
func (t *Tx) ReplacedContent(ctx context.Context, id string) (Transfer, error) {
	old := Transfer{ID: id}
	var amount string
	var intent *string
	err := t.tx.QueryRow(ctx, `SELECT asset, address, address_key, amount::text, intent_id FROM transfer_contents
		WHERE transfer_id = $1 ORDER BY seq DESC LIMIT 1`, id).Scan(&old.Asset, &old.Address, &old.AddressKey, &amount, &intent)
	if err != nil {
		return Transfer{}, translate(err)
	}
	old.IntentID = deref(intent)
	old.Amount, err = parseNum(amount)
	return old, err
}

// VoidDecisions voids finance's live decisions on a transfer other than
// credit_intent (which only says which intent the transfer counts for),
// with reason, and returns them: they were decided on content the best
// chain no longer has. The transfer's resolved part is 0 again.
func (t *Tx) VoidDecisions(ctx context.Context, id, reason string, now time.Time) ([]Resolution, error) {
	tr, err := t.GetTransfer(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []Resolution
	for _, r := range tr.Resolutions {
		if r.Action != "credit_intent" {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	if _, err := t.tx.Exec(ctx, `UPDATE resolutions SET voided_at = $2, voided_reason = $3
		WHERE transfer_id = $1 AND voided_at IS NULL AND action <> 'credit_intent'`, id, now, reason); err != nil {
		return nil, translate(err)
	}
	_, err = t.tx.Exec(ctx, `UPDATE transfers SET resolved = 0, updated_at = $2 WHERE id = $1`, id, now)
	return out, translate(err)
}

// sameConfirmedBlock is true in UpsertTransfer's conflict branch when the
// stored transfer is confirmed in the very block being applied again.
const sameConfirmedBlock = `(transfers.status = 'confirmed' AND EXCLUDED.block_hash IS NOT NULL AND transfers.block_hash = EXCLUDED.block_hash)`

// GetTransfer returns a transfer by id inside the transaction.
func (t *Tx) GetTransfer(ctx context.Context, id string) (Transfer, error) {
	return scanTransfer(t.tx.QueryRow(ctx, `SELECT `+transferColumns+transferFrom+`WHERE t.id = $1`, id))
}

// TransferForUpdate locks and returns a transfer by id.
func (t *Tx) TransferForUpdate(ctx context.Context, id string) (Transfer, error) {
	return scanTransfer(t.tx.QueryRow(ctx, `SELECT `+transferColumns+transferFrom+`WHERE t.id = $1 FOR UPDATE OF t`, id))
}

// GetTransfer returns a transfer by id.
func (s *Store) GetTransfer(ctx context.Context, id string) (Transfer, error) {
	return scanTransfer(s.pool.QueryRow(ctx, `SELECT `+transferColumns+transferFrom+`WHERE t.id = $1`, id))
}

// TransfersByIntent returns the transfers of an intent in first-seen order.
func (s *Store) TransfersByIntent(ctx context.Context, intentID string) ([]Transfer, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+transferColumns+transferFrom+`WHERE t.intent_id = $1 ORDER BY t.first_seen_at, t.id`, intentID)
	if err != nil {
		return nil, translate(err)
	}
	return scanTransfers(rows)
}

// TransfersByIntent returns the transfers of an intent inside the transaction.
func (t *Tx) TransfersByIntent(ctx context.Context, intentID string) ([]Transfer, error) {
	rows, err := t.tx.Query(ctx, `SELECT `+transferColumns+transferFrom+`WHERE t.intent_id = $1 ORDER BY t.first_seen_at, t.id`, intentID)
	if err != nil {
		return nil, translate(err)
	}
	return scanTransfers(rows)
}

// SetDecision stores the matcher's decision on a transfer: its
// classification and the part of it that pays its intent.
func (t *Tx) SetDecision(ctx context.Context, id string, class payment.Classification, settled *big.Int, now time.Time) error {
	_, err := t.tx.Exec(ctx, `UPDATE transfers SET classification = $2, settled = $3::numeric, updated_at = $4
		WHERE id = $1 AND (classification <> $2 OR settled <> $3::numeric)`, id, class, num(settled), now)
	return translate(err)
}

// TransferDecision is one transfer's write of a decision
// (QueueTransferDecisions): Decide stores Class and Settled as SetDecision
// does, Notify records Class as notified as SetNotified does.
type TransferDecision struct {
	ID             string
	Class          payment.Classification
	Settled        *big.Int
	Decide, Notify bool
}

// QueueTransferDecisions writes a decision's transfers in one statement,
// queued to go with the transaction's next one (which reports its
// failure): each row ends as SetDecision then SetNotified would leave it
// (updated_at moves only when the class or settled part changes), where
// each was a statement of its own (issue 37 item 3). Every id appears
// once.
func (t *Tx) QueueTransferDecisions(ds []TransferDecision, now time.Time) {
	if len(ds) == 0 {
		return
	}
	n := len(ds)
	ids, classes, settled := make([]string, n), make([]string, n), make([]string, n)
	decide, notify := make([]bool, n), make([]bool, n)
	for i, d := range ds {
		ids[i], classes[i], settled[i], decide[i], notify[i] = d.ID, string(d.Class), num(d.Settled), d.Decide, d.Notify
	}
	t.tx.queue(`UPDATE transfers t SET
			classification = CASE WHEN u.decide THEN u.class ELSE t.classification END,
			settled = CASE WHEN u.decide THEN u.settled ELSE t.settled END,
			updated_at = CASE WHEN u.decide AND (t.classification <> u.class OR t.settled <> u.settled) THEN $6 ELSE t.updated_at END,
			notified_class = CASE WHEN u.notify THEN u.class ELSE t.notified_class END
		FROM unnest($1::text[], $2::text[], $3::numeric[], $4::boolean[], $5::boolean[]) AS u(id, class, settled, decide, notify)
		WHERE t.id = u.id AND (u.notify OR (u.decide AND (t.classification <> u.class OR t.settled <> u.settled)))`,
		ids, classes, settled, decide, notify, now)
}

// SetCredited marks a transfer as counted for its intent by finance.
func (t *Tx) SetCredited(ctx context.Context, id, intentID string, now time.Time) error {
	_, err := t.tx.Exec(ctx, `UPDATE transfers SET credited = TRUE, intent_id = $2, updated_at = $3 WHERE id = $1`, id, intentID, now)
	return translate(err)
}

// VoidCredit undoes a credit_intent decision that can no longer take effect
// (the payable was paid elsewhere): the transfer is no longer credited,
// belongs again to the intent of the address it paid (none for an address
// without intent), and its resolution is voided with reason, so the
// transfer is unresolved again. It returns the transfer's intent now.
func (t *Tx) VoidCredit(ctx context.Context, id, reason string, now time.Time) (string, error) {
	var home *string
	if err := t.tx.QueryRow(ctx, `UPDATE transfers t SET credited = FALSE, updated_at = $2,
			intent_id = (SELECT i.id FROM intents i WHERE i.network = t.network AND i.address_key = t.address_key)
		WHERE t.id = $1 RETURNING t.intent_id`, id, now).Scan(&home); err != nil {
		return "", translate(err)
	}
	_, err := t.tx.Exec(ctx, `UPDATE resolutions SET voided_at = $2, voided_reason = $3
		WHERE transfer_id = $1 AND voided_at IS NULL AND action = 'credit_intent'`, id, now, reason)
	return deref(home), translate(err)
}

// OrphanAbove marks every transfer of network in a block above height as
// orphaned (its block left the best chain) and returns them.
func (t *Tx) OrphanAbove(ctx context.Context, network string, height int64, now time.Time) ([]Transfer, error) {
	rows, err := t.tx.Query(ctx, `UPDATE transfers SET status = 'orphaned', confirmed_at = NULL, updated_at = $3
		WHERE network = $1 AND block_height > $2 AND status <> 'orphaned' RETURNING id`, network, height, now)
	if err != nil {
		return nil, translate(err)
	}
	return t.refetch(ctx, rows)
}

// OrphanPending marks mempool transfers of network that are no longer in
// the mempool (replaced or evicted) as orphaned and returns them.
func (t *Tx) OrphanPending(ctx context.Context, network string, keep []string, now time.Time) ([]Transfer, error) {
	rows, err := t.tx.Query(ctx, `UPDATE transfers SET status = 'orphaned', updated_at = $3
		WHERE network = $1 AND status = 'pending' AND NOT (txid = ANY($2)) RETURNING id`, network, keep, now)
	if err != nil {
		return nil, translate(err)
	}
	return t.refetch(ctx, rows)
}

// ConfirmUpTo promotes confirming transfers of network that reached their
// confirmations at tip (or finality at final, for confirmations_required 0)
// and returns them.
func (t *Tx) ConfirmUpTo(ctx context.Context, network string, tip, final int64, now time.Time) ([]Transfer, error) {
	rows, err := t.tx.Query(ctx, confirmUpToSQL, network, tip, final, now)
	if err != nil {
		return nil, translate(err)
	}
	return t.refetch(ctx, rows)
}

const confirmUpToSQL = `UPDATE transfers SET status = 'confirmed', confirmed_at = $4, updated_at = $4
		WHERE network = $1 AND status = 'confirming' AND (
			(confirmations_required > 0 AND block_height + confirmations_required - 1 <= $2) OR
			(confirmations_required = 0 AND block_height <= $3))
		RETURNING id`

func (t *Tx) refetch(ctx context.Context, rows pgx.Rows) ([]Transfer, error) {
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, translate(err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err = t.tx.Query(ctx, `SELECT `+transferColumns+transferFrom+`WHERE t.id = ANY($1) ORDER BY t.first_seen_at, t.id`, ids)
	if err != nil {
		return nil, translate(err)
	}
	return scanTransfers(rows)
}

// PendingTxIDs returns the txids of network's mempool transfers.
func (t *Tx) PendingTxIDs(ctx context.Context, network string) ([]string, error) {
	rows, err := t.tx.Query(ctx, `SELECT DISTINCT txid FROM transfers WHERE network = $1 AND status = 'pending'`, network)
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// TransferByKey returns a transfer by its natural key.
func (t *Tx) TransferByKey(ctx context.Context, network, txid string, idx int64) (Transfer, error) {
	return scanTransfer(t.tx.QueryRow(ctx, `SELECT `+transferColumns+transferFrom+`WHERE t.network = $1 AND t.txid = $2 AND t.idx = $3`, network, txid, idx))
}

// SetNotified records that a transfer.unmatched event was emitted for the
// transfer's classification class.
func (t *Tx) SetNotified(ctx context.Context, id string, class payment.Classification) error {
	_, err := t.tx.Exec(ctx, `UPDATE transfers SET notified_class = $2 WHERE id = $1`, id, class)
	return translate(err)
}

// TransfersOfIntents returns the transfers of the given intents, in the
// order they were recorded.
func (t *Tx) TransfersOfIntents(ctx context.Context, ids []string) ([]Transfer, error) {
	rows, err := t.tx.Query(ctx, `SELECT `+transferColumns+transferFrom+`WHERE t.intent_id = ANY($1)
		ORDER BY t.recorded`, ids)
	if err != nil {
		return nil, translate(err)
	}
	return scanTransfers(rows)
}

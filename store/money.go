package store

import (
	"context"
	"math/big"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Balance is an account's money: Available is the sum of its ledger entries
// (the accounts row), Pending the USD amount of its top-ups that are
// detected but not paid yet (not spendable), Unrecovered what reversals
// could not take back and no recovery has settled since.
type Balance struct {
	Store            string
	Account          string
	AvailableCents   int64
	PendingCents     int64
	UnrecoveredCents int64
}

// Balance returns an account's balance. An account without entries has a
// zero balance (it is not an error).
func (s *Store) Balance(ctx context.Context, store, account string) (Balance, error) {
	b := Balance{Store: StoreOr(store), Account: account}
	err := s.pool.QueryRow(ctx, `SELECT
		coalesce((SELECT balance_cents FROM accounts WHERE store_id = $2 AND account = $1), 0),
		coalesce((SELECT sum(p.amount_cents) FROM payables p WHERE p.store_id = $2 AND p.kind = 'topup' AND p.account = $1
			AND p.paid_at IS NULL AND EXISTS (SELECT 1 FROM intents i WHERE i.payable_id = p.id AND i.status = 'detected')), 0),
		(SELECT coalesce(sum(unrecovered_cents), 0) - coalesce(sum(amount_cents) FILTER (WHERE type = 'recovery'), 0)
			FROM ledger_entries WHERE store_id = $2 AND account = $1)`, account, b.Store).
		Scan(&b.AvailableCents, &b.PendingCents, &b.UnrecoveredCents)
	return b, translate(err)
}

const ledgerColumns = `seq, id, store_id, account, type, amount_cents, reference, coalesce(intent_id, ''), coalesce(transfer_id, ''),
	balance_after_cents, unrecovered_cents, created_at, coalesce(resolution_seq, 0)`

func scanLedger(row pgx.Row) (LedgerEntry, error) {
	var e LedgerEntry
	err := row.Scan(&e.Seq, &e.ID, &e.Store, &e.Account, &e.Type, &e.AmountCents, &e.Reference, &e.IntentID, &e.TransferID,
		&e.BalanceAfter, &e.UnrecoveredCents, &e.CreatedAt, &e.ResolutionSeq)
	return e, translate(err)
}

// LedgerEntries returns up to limit entries of an account after the entry
// afterID ("" from the first), oldest first. An unknown afterID is
// ErrNotFound.
func (s *Store) LedgerEntries(ctx context.Context, store, account, afterID string, limit int) ([]LedgerEntry, error) {
	var after int64
	store = StoreOr(store)
	if afterID != "" {
		err := s.pool.QueryRow(ctx, `SELECT seq FROM ledger_entries WHERE id = $1 AND store_id = $3 AND account = $2`, afterID, account, store).Scan(&after)
		if err != nil {
			return nil, translate(err)
		}
	}
	rows, err := s.pool.Query(ctx, `SELECT `+ledgerColumns+` FROM ledger_entries WHERE store_id = $4 AND account = $1 AND seq > $2
		ORDER BY seq LIMIT $3`, account, after, limit, store)
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (LedgerEntry, error) { return scanLedger(r) })
}

// LedgerEntryByID returns one entry inside the transaction.
func (t *Tx) LedgerEntryByID(ctx context.Context, id string) (LedgerEntry, error) {
	return scanLedger(t.tx.QueryRow(ctx, `SELECT `+ledgerColumns+` FROM ledger_entries WHERE id = $1`, id))
}

// DebitByReference returns the debit that paid an order reference of
// store.
func (t *Tx) DebitByReference(ctx context.Context, store, reference string) (LedgerEntry, error) {
	return scanLedger(t.tx.QueryRow(ctx, `SELECT `+ledgerColumns+` FROM ledger_entries WHERE store_id = $2 AND reference = $1 AND type = 'debit'`, reference, StoreOr(store)))
}

// InboxFilter selects transfers of the finance inbox.
type InboxFilter struct {
	// Status is "unresolved" (needs a decision, the default), "resolved" or
	// "all" (every transfer that did not settle cleanly).
	Status         string
	Network        string
	Classification string
	// After is the id of the last transfer of the previous page.
	After string
	Limit int
	// SeenAfter and SeenBefore, when set, bound first_seen_at (the age
	// filter of the console's inbox).
	SeenAfter, SeenBefore *time.Time
	// Store, when set, keeps the transfers of that store ("": every
	// store's). A cursor (After) of another store is ErrNotFound, as an
	// unknown one.
	Store string
}

// InboxTransfers lists transfers that did not settle cleanly (classification
// other than settles, or resolved by finance), newest first (created_at,
// then id), one page after f.After.
func (s *Store) InboxTransfers(ctx context.Context, f InboxFilter) ([]Transfer, error) {
	var at time.Time
	cursorID := ""
	if f.After != "" {
		if err := s.pool.QueryRow(ctx, `SELECT created_at, id FROM transfers WHERE id = $1 AND ($2 = '' OR store_id = $2)`,
			f.After, f.Store).Scan(&at, &cursorID); err != nil {
			return nil, translate(err)
		}
	}
	// Only the filters that are set are in the query: a query that says
	// "($n = '' OR ...)" for each is harder to plan well.
	args := []any{f.Status, f.Limit}
	q := `SELECT ` + transferColumns + transferFrom + `
		WHERE ` + inboxSelection(f.Status) + ` AND $1 <> ''`
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.Network != "" {
		q += ` AND t.network = ` + arg(f.Network)
	}
	if f.Classification != "" {
		q += ` AND t.classification = ` + arg(f.Classification)
	}
	if cursorID != "" {
		q += ` AND (t.created_at, t.id) < (` + arg(at) + `, ` + arg(cursorID) + `)`
	}
	if f.SeenAfter != nil {
		q += ` AND t.first_seen_at >= ` + arg(*f.SeenAfter)
	}
	if f.SeenBefore != nil {
		q += ` AND t.first_seen_at < ` + arg(*f.SeenBefore)
	}
	if f.Store != "" {
		q += ` AND t.store_id = ` + arg(f.Store)
	}
	rows, err := s.pool.Query(ctx, q+` ORDER BY t.created_at DESC, t.id DESC LIMIT $2`, args...)
	if err != nil {
		return nil, translate(err)
	}
	return scanTransfers(rows)
}

// inboxSelection is the inbox's row selection for a status, written so that
// the unresolved inbox walks the transfers_review index in order (and stops
// at the page size) instead of sorting every transfer. A transfer needs a
// decision while part of it neither pays its intent nor is covered by a
// finance decision (a zero-amount one, until it has any decision).
func inboxSelection(status string) string {
	switch status {
	case "unresolved":
		return `t.classification <> 'settles' AND ` + Unresolved
	case "resolved":
		return hasResolution
	}
	return `(t.classification <> 'settles' OR ` + hasResolution + `)`
}

// Unresolved is the SQL condition (on transfers t) that part of the
// transfer still needs a finance decision.
const Unresolved = `(t.amount > t.settled + t.resolved OR (t.amount = 0 AND NOT ` + hasResolution + `))`

// hasResolution is the SQL condition that transfer t has a live decision.
const hasResolution = `EXISTS (SELECT 1 FROM resolutions r WHERE r.transfer_id = t.id AND r.voided_at IS NULL)`

// InsertResolution records finance's decision on a transfer and adds what
// it covers to the transfer's resolved part, returning the resolution's
// seq. A second live credit_intent of the same transfer is ErrConflict;
// the caller checks, under the transfer's row lock, that what a decision
// covers is unresolved.
func (t *Tx) InsertResolution(ctx context.Context, transferID string, r Resolution) (int64, error) {
	var seq int64
	err := t.tx.QueryRow(ctx, `WITH ins AS (
			INSERT INTO resolutions (transfer_id, action, note, actor, intent_id, account, amount_cents, refund_txid, covers, created_at,
				usd_per_unit, reference_usd_per_unit, override_reason)
			VALUES ($1, $2, $3, $4, NULLIF($5, ''), NULLIF($6, ''), $7, NULLIF($8, ''), $9::numeric, $10,
				NULLIF($11, '')::numeric, NULLIF($12, '')::numeric, NULLIF($13, '')) RETURNING seq, covers),
		upd AS (UPDATE transfers SET resolved = resolved + (SELECT coalesce(covers, 0) FROM ins), updated_at = $10
			WHERE id = $1 AND (SELECT covers FROM ins) IS NOT NULL)
		SELECT seq FROM ins`,
		transferID, r.Action, r.Note, r.Actor, r.IntentID, r.Account, r.AmountCents, r.RefundTxID, numOrNil(r.Covers), r.CreatedAt,
		r.USDPerUnit, r.ReferenceUSDPerUnit, r.OverrideReason).Scan(&seq)
	return seq, translate(err)
}

// numOrNil is num(x), or NULL for nil.
func numOrNil(x *big.Int) any {
	if x == nil {
		return nil
	}
	return num(x)
}

// IntentIDsOfPayable returns the ids of a payable's intents.
func (t *Tx) IntentIDsOfPayable(ctx context.Context, payableID int64) ([]string, error) {
	rows, err := t.tx.Query(ctx, `SELECT id FROM intents WHERE payable_id = $1 ORDER BY id`, payableID)
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// extraRow scans a transfer's columns followed by extra columns.
type extraRow struct {
	pgx.Row
	extra []any
}

// Scan scans the transfer's destinations, then the extra ones.
func (r extraRow) Scan(dest ...any) error { return r.Row.Scan(append(dest, r.extra...)...) }

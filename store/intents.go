package store

import (
	"context"
	"errors"
	"math/big"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/payment"
)

// Payable is what the storefront wants paid: an order or a top-up.
type Payable struct {
	ID int64
	// Store is the store whose reference (and account) this is ("" when
	// writing: the default store).
	Store        string
	Kind         payment.PayableKind
	Reference    string
	Account      string
	AmountCents  int64
	PaidByIntent string
	PaidByEntry  string
	PaidAt       *time.Time
	CreatedAt    time.Time
}

// Intent is one attempt to pay a payable with one method.
type Intent struct {
	ID          string
	PayableID   int64
	Store       string
	Kind        payment.PayableKind
	Reference   string
	Account     string
	AmountCents int64

	Method     string
	Network    string
	Asset      string
	Amount     *big.Int
	Tolerance  *big.Int
	DustMin    *big.Int
	Address    string
	AddressKey []byte

	Rate        string
	RateSources []string
	RateAt      time.Time
	ExpiresAt   time.Time

	Status                payment.IntentStatus
	Overpaid              bool
	Late                  bool
	Received              *big.Int
	ConfirmedSum          *big.Int
	ConfirmationsRequired int
	ReportedAt            *time.Time
	DetectedAt            *time.Time
	PaidAt                *time.Time
	RenewedFrom           string
	SupersededBy          string
	CreatedAt             time.Time
	UpdatedAt             time.Time
	// ReturnURL is where the hosted payment page sends the customer once
	// paid ("" for none).
	ReturnURL string
	// Locale is the payment page's language, as the storefront gave it
	// ("" for none: the customer's browser decides).
	Locale string
}

const payableColumns = `id, store_id, kind, reference, coalesce(account, ''), amount_cents, coalesce(paid_by_intent, ''), coalesce(paid_by_entry, ''), paid_at, created_at`

func scanPayable(row pgx.Row) (Payable, error) {
	var p Payable
	err := row.Scan(&p.ID, &p.Store, &p.Kind, &p.Reference, &p.Account, &p.AmountCents, &p.PaidByIntent, &p.PaidByEntry, &p.PaidAt, &p.CreatedAt)
	return p, translate(err)
}

// EnsurePayable inserts the payable unless (store, kind, reference) exists, and
// returns the stored row locked for update. The caller compares amount and
// account with what it asked for.
func (t *Tx) EnsurePayable(ctx context.Context, p Payable) (Payable, error) {
	// DO UPDATE (a no-op) locks and returns an existing row in the same
	// round trip as the insert.
	return scanPayable(t.tx.QueryRow(ctx, ensurePayableSQL, p.Kind, p.Reference, p.Account, p.AmountCents, p.CreatedAt, StoreOr(p.Store)))
}

const ensurePayableSQL = `INSERT INTO payables (kind, reference, account, amount_cents, created_at, store_id)
		VALUES ($1, $2, NULLIF($3, ''), $4, $5, $6)
		ON CONFLICT (store_id, kind, reference) DO UPDATE SET kind = payables.kind
		RETURNING ` + payableColumns

// PayableForUpdate locks and returns a payable by id.
func (t *Tx) PayableForUpdate(ctx context.Context, id int64) (Payable, error) {
	return scanPayable(t.tx.QueryRow(ctx, `SELECT `+payableColumns+` FROM payables WHERE id = $1 FOR UPDATE`, id))
}

// PayableByReference returns a payable of store by kind and reference
// (store "": the default store).
func (s *Store) PayableByReference(ctx context.Context, store, kind, reference string) (Payable, error) {
	return scanPayable(s.pool.QueryRow(ctx, `SELECT `+payableColumns+` FROM payables WHERE store_id = $3 AND kind = $1 AND reference = $2`, kind, reference, StoreOr(store)))
}

// SetPayablePaid records which intent paid the payable. It fails with
// ErrConflict when another intent already did.
func (t *Tx) SetPayablePaid(ctx context.Context, payableID int64, intentID string, now time.Time) error {
	tag, err := t.tx.Exec(ctx, `UPDATE payables SET paid_by_intent = $2, paid_at = $3
		WHERE id = $1 AND paid_by_entry IS NULL AND (paid_by_intent IS NULL OR paid_by_intent = $2)`, payableID, intentID, now)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() != 1 {
		return ErrConflict
	}
	return nil
}

// ClearPayablePaid undoes SetPayablePaid when the paying intent is reverted.
func (t *Tx) ClearPayablePaid(ctx context.Context, payableID int64, intentID string) error {
	_, err := t.tx.Exec(ctx, `UPDATE payables SET paid_by_intent = NULL, paid_at = NULL
		WHERE id = $1 AND paid_by_intent = $2`, payableID, intentID)
	return translate(err)
}

const intentColumns = `i.id, i.payable_id, p.store_id, p.kind, p.reference, coalesce(p.account, ''), p.amount_cents,
	i.method, i.network, i.asset, i.amount::text, i.tolerance::text, i.dust_min::text, i.address, i.address_key,
	i.rate::text, i.rate_sources, i.rate_at, i.expires_at,
	i.status, i.overpaid, i.late, i.received::text, i.confirmed_sum::text, i.confirmations_required,
	i.reported_at, i.detected_at, i.paid_at, coalesce(i.renewed_from, ''), coalesce(i.superseded_by, ''),
	i.created_at, i.updated_at, coalesce(i.return_url, ''), coalesce(i.locale, '')`

const intentFrom = ` FROM intents i JOIN payables p ON p.id = i.payable_id `

func scanIntent(row pgx.Row) (Intent, error) {
	var in Intent
	var amount, tol, dust, recv, conf string
	err := row.Scan(&in.ID, &in.PayableID, &in.Store, &in.Kind, &in.Reference, &in.Account, &in.AmountCents,
		&in.Method, &in.Network, &in.Asset, &amount, &tol, &dust, &in.Address, &in.AddressKey,
		&in.Rate, &in.RateSources, &in.RateAt, &in.ExpiresAt,
		&in.Status, &in.Overpaid, &in.Late, &recv, &conf, &in.ConfirmationsRequired,
		&in.ReportedAt, &in.DetectedAt, &in.PaidAt, &in.RenewedFrom, &in.SupersededBy,
		&in.CreatedAt, &in.UpdatedAt, &in.ReturnURL, &in.Locale)
	if err != nil {
		return Intent{}, translate(err)
	}
	for _, f := range []struct {
		dst **big.Int
		s   string
	}{{&in.Amount, amount}, {&in.Tolerance, tol}, {&in.DustMin, dust}, {&in.Received, recv}, {&in.ConfirmedSum, conf}} {
		if *f.dst, err = parseNum(f.s); err != nil {
			return Intent{}, err
		}
	}
	return in, nil
}

func scanIntents(rows pgx.Rows) ([]Intent, error) {
	defer rows.Close()
	var out []Intent
	for rows.Next() {
		in, err := scanIntent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, translate(rows.Err())
}

// InsertIntent stores a new intent. Address uniqueness per network is a
// constraint: a second intent on the same address is ErrConflict.
func (t *Tx) InsertIntent(ctx context.Context, in Intent) error {
	_, err := t.tx.Exec(ctx, insertIntentsSQL, insertIntentsArgs([]Intent{in})...)
	return translate(err)
}

// QueueInsertIntent is InsertIntent sent in one round trip with the
// transaction's next statement or its commit, whichever comes first; that
// call reports its failure (ErrConflict for a taken address).
func (t *Tx) QueueInsertIntent(in Intent) {
	t.QueueInsertIntents([]Intent{in})
}

// GetIntent returns an intent by id.
func (s *Store) GetIntent(ctx context.Context, id string) (Intent, error) {
	return scanIntent(s.pool.QueryRow(ctx, `SELECT `+intentColumns+intentFrom+`WHERE i.id = $1`, id))
}

// GetIntent returns an intent by id inside the transaction.
func (t *Tx) GetIntent(ctx context.Context, id string) (Intent, error) {
	return scanIntent(t.tx.QueryRow(ctx, `SELECT `+intentColumns+intentFrom+`WHERE i.id = $1`, id))
}

// IntentForUpdate locks and returns an intent by id. Every status change of
// an intent happens under this lock.
func (t *Tx) IntentForUpdate(ctx context.Context, id string) (Intent, error) {
	return scanIntent(t.tx.QueryRow(ctx, `SELECT `+intentColumns+intentFrom+`WHERE i.id = $1 FOR UPDATE OF i`, id))
}

// IntentsByPayable returns the intents of a payable, oldest first.
func (s *Store) IntentsByPayable(ctx context.Context, payableID int64) ([]Intent, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+intentColumns+intentFrom+`WHERE i.payable_id = $1 ORDER BY i.created_at, i.id`, payableID)
	if err != nil {
		return nil, translate(err)
	}
	return scanIntents(rows)
}

// IntentState is what the matcher decides for an intent.
type IntentState struct {
	Status       payment.IntentStatus
	Overpaid     bool
	Late         bool
	Received     *big.Int
	ConfirmedSum *big.Int
	DetectedAt   *time.Time
	PaidAt       *time.Time
}

// UpdateIntentState writes a matcher decision.
func (t *Tx) UpdateIntentState(ctx context.Context, id string, st IntentState, now time.Time) error {
	_, err := t.tx.Exec(ctx, `UPDATE intents SET status = $2, overpaid = $3, late = $4, received = $5::numeric,
		confirmed_sum = $6::numeric, detected_at = $7, paid_at = $8, updated_at = $9 WHERE id = $1`,
		id, st.Status, st.Overpaid, st.Late, num(st.Received), num(st.ConfirmedSum), st.DetectedAt, st.PaidAt, now)
	return translate(err)
}

// SetReported records the customer's "I have paid" once; later calls keep
// the first time. It reports whether this call set it.
func (t *Tx) SetReported(ctx context.Context, id string, now time.Time) (bool, error) {
	tag, err := t.tx.Exec(ctx, `UPDATE intents SET reported_at = $2, updated_at = $2 WHERE id = $1 AND reported_at IS NULL`, id, now)
	if err != nil {
		return false, translate(err)
	}
	return tag.RowsAffected() == 1, nil
}

// Supersede records that newID renewed oldID (a fact: the decision that
// follows makes oldID superseded and announces it).
func (t *Tx) Supersede(ctx context.Context, oldID, newID string, now time.Time) error {
	_, err := t.tx.Exec(ctx, `UPDATE intents SET superseded_by = $2, updated_at = $3 WHERE id = $1`, oldID, newID, now)
	return translate(err)
}

// DueIntents returns open intents whose deadline passed before now.
func (s *Store) DueIntents(ctx context.Context, now time.Time, limit int) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM intents WHERE status IN ('awaiting_payment', 'detected')
		AND expires_at < $1 AND NOT (status = 'detected' AND received >= amount - tolerance)
		ORDER BY expires_at LIMIT $2`, now, limit)
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// SetPayablePaidByEntry records that a ledger debit paid an order. It fails
// with ErrConflict when the order is already paid.
func (t *Tx) SetPayablePaidByEntry(ctx context.Context, payableID int64, entryID string, now time.Time) error {
	tag, err := t.tx.Exec(ctx, `UPDATE payables SET paid_by_entry = $2, paid_at = $3
		WHERE id = $1 AND paid_at IS NULL`, payableID, entryID, now)
	if err != nil {
		return translate(err)
	}
	if tag.RowsAffected() != 1 {
		return ErrConflict
	}
	return nil
}

// PaymentInProgress returns the id of an intent of the payable whose
// counting transfers, confirmed or not, cover its amount while it is not
// paid (detected, or reverted with its payment back on its way), or "" for
// none. Call it with the payable locked: the matcher writes an intent's
// state under that lock.
func (t *Tx) PaymentInProgress(ctx context.Context, payableID int64) (string, error) {
	var id string
	err := t.tx.QueryRow(ctx, `SELECT id FROM intents WHERE payable_id = $1 AND status IN ('detected', 'reverted')
		AND received > 0 AND received >= amount - tolerance ORDER BY id LIMIT 1`, payableID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return id, translate(err)
}

// IntentsOfPayableForUpdate locks and returns every intent of a payable,
// oldest first (the order a payable's decision takes them in). The caller
// holds the payable's row lock.
func (t *Tx) IntentsOfPayableForUpdate(ctx context.Context, payableID int64) ([]Intent, error) {
	rows, err := t.tx.Query(ctx, `SELECT `+intentColumns+intentFrom+`WHERE i.payable_id = $1 ORDER BY i.created_at, i.id FOR UPDATE OF i`, payableID)
	if err != nil {
		return nil, translate(err)
	}
	return scanIntents(rows)
}

// PayablesOfIntentsForUpdate locks and returns the distinct payables of
// the given intents, in ascending id order, in one statement: the rows are
// locked in that order (the order in which a transaction deciding several
// of them locks them), where PayablesOfIntents then PayableForUpdate for
// each took a statement more (issue 37 item 3).
func (t *Tx) PayablesOfIntentsForUpdate(ctx context.Context, ids []string) ([]Payable, error) {
	rows, err := t.tx.Query(ctx, `SELECT `+payableColumns+` FROM payables
		WHERE id IN (SELECT payable_id FROM intents WHERE id = ANY($1)) ORDER BY id FOR UPDATE OF payables`, ids)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []Payable
	for rows.Next() {
		p, err := scanPayable(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, translate(rows.Err())
}

// PayablesOfIntents returns the distinct payables of the given intents, in
// ascending id order (the order in which a transaction deciding several of
// them locks them).
func (t *Tx) PayablesOfIntents(ctx context.Context, ids []string) ([]int64, error) {
	rows, err := t.tx.Query(ctx, `SELECT DISTINCT payable_id FROM intents WHERE id = ANY($1) ORDER BY payable_id`, ids)
	if err != nil {
		return nil, translate(err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

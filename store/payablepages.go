package store

import (
	"context"
	"time"
)

// PagePayable is a payable with its page's settings: a payable made for
// the payment page (POST /v1/payables), where the customer picks the
// method and the intent is created then.
type PagePayable struct {
	Payable
	// PageCreatedAt is when it was made for the page; nil: it has no page
	// of its own (its intents were created through the API).
	PageCreatedAt *time.Time
	// Locale and ReturnURL are given to the intent the customer chooses
	// ("" for none).
	Locale    string
	ReturnURL string
}

const pagePayableColumns = payableColumns + `, page_created_at, coalesce(page_locale, ''), coalesce(page_return_url, '')`

func scanPagePayable(row interface{ Scan(...any) error }) (PagePayable, error) {
	var p PagePayable
	err := row.Scan(&p.ID, &p.Store, &p.Kind, &p.Reference, &p.Account, &p.AmountCents, &p.PaidByIntent, &p.PaidByEntry, &p.PaidAt, &p.CreatedAt,
		&p.PageCreatedAt, &p.Locale, &p.ReturnURL)
	return p, translate(err)
}

// EnsurePagePayable inserts the payable for the page unless (kind,
// reference) exists, and returns the stored row and whether it is new; an existing payable
// becomes a page's (its first page settings kept). Idempotent on (kind,
// reference). An existing payable of another amount or account is left
// as it is: ErrNotFound (the caller reads it to say why).
func (s *Store) EnsurePagePayable(ctx context.Context, p Payable, locale, returnURL string, now time.Time) (pp PagePayable, inserted bool, err error) {
	row := s.pool.QueryRow(ctx, `INSERT INTO payables (kind, reference, account, amount_cents, created_at,
			page_created_at, page_locale, page_return_url, store_id)
		VALUES ($1, $2, NULLIF($3, ''), $4, $5, $5, NULLIF($6, ''), NULLIF($7, ''), $8)
		ON CONFLICT (store_id, kind, reference) DO UPDATE SET
			page_locale = CASE WHEN payables.page_created_at IS NULL THEN EXCLUDED.page_locale ELSE payables.page_locale END,
			page_return_url = CASE WHEN payables.page_created_at IS NULL THEN EXCLUDED.page_return_url ELSE payables.page_return_url END,
			page_created_at = coalesce(payables.page_created_at, EXCLUDED.page_created_at)
		WHERE payables.amount_cents = EXCLUDED.amount_cents AND coalesce(payables.account, '') = coalesce(EXCLUDED.account, '')
		RETURNING `+pagePayableColumns+`, xmax = 0`, p.Kind, p.Reference, p.Account, p.AmountCents, now, locale, returnURL, StoreOr(p.Store))
	err = row.Scan(&pp.ID, &pp.Store, &pp.Kind, &pp.Reference, &pp.Account, &pp.AmountCents, &pp.PaidByIntent, &pp.PaidByEntry, &pp.PaidAt, &pp.CreatedAt,
		&pp.PageCreatedAt, &pp.Locale, &pp.ReturnURL, &inserted)
	return pp, inserted, translate(err)
}

// PagePayable returns a payable with its page's settings by id.
func (s *Store) PagePayable(ctx context.Context, id int64) (PagePayable, error) {
	return scanPagePayable(s.pool.QueryRow(ctx, `SELECT `+pagePayableColumns+` FROM payables WHERE id = $1`, id))
}

// PagePayableByReference returns a payable of store with its page's
// settings by kind and reference.
func (s *Store) PagePayableByReference(ctx context.Context, store, kind, reference string) (PagePayable, error) {
	return scanPagePayable(s.pool.QueryRow(ctx, `SELECT `+pagePayableColumns+` FROM payables WHERE store_id = $3 AND kind = $1 AND reference = $2`, kind, reference, StoreOr(store)))
}

// PagePayableForUpdate locks a payable (FOR UPDATE, as PayableForUpdate)
// and returns it with its page's settings: the customer's choices on the
// payable's page are decided one at a time under this lock.
func (t *Tx) PagePayableForUpdate(ctx context.Context, id int64) (PagePayable, error) {
	return scanPagePayable(t.tx.QueryRow(ctx, `SELECT `+pagePayableColumns+` FROM payables WHERE id = $1 FOR UPDATE`, id))
}

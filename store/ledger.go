package store

import (
	"context"
	"fmt"
	"time"

	"github.com/paywatch/paywatch/payment"
)

// LedgerEntry is one append-only line of an account's register.
type LedgerEntry struct {
	Seq int64
	ID  string
	// Store is the store whose account this is. Writing, "" takes the
	// store of the entry's intent, else of its transfer; an entry with
	// neither must name it.
	Store       string
	Account     string
	Type        payment.LedgerEntryType
	AmountCents int64
	Reference   string
	IntentID    string
	TransferID  string
	// ResolutionSeq is the finance decision (credit_account) an entry of a
	// transfer belongs to: a transfer may have one for its surplus and one
	// for the rest, each credited and followed on its own. 0 for none.
	ResolutionSeq    int64
	BalanceAfter     int64
	UnrecoveredCents int64
	CreatedAt        time.Time
}

// lockAccount creates the account row if needed and locks it: every ledger
// write of an account is serialized on this row.
func (t *Tx) lockAccount(ctx context.Context, store, account string, now time.Time) (int64, error) {
	if _, err := t.tx.Exec(ctx, `INSERT INTO accounts (store_id, account, balance_cents, updated_at) VALUES ($3, $1, 0, $2)
		ON CONFLICT (store_id, account) DO NOTHING`, account, now, store); err != nil {
		return 0, translate(err)
	}
	var bal int64
	err := t.tx.QueryRow(ctx, `SELECT balance_cents FROM accounts WHERE store_id = $2 AND account = $1 FOR UPDATE`, account, store).Scan(&bal)
	return bal, translate(err)
}

// AppendLedger appends an entry and moves the balance, under the account's
// row lock. Credits add; debits subtract and fail with ErrInsufficientFunds
// when the balance is short; reversals subtract what the balance holds and
// record the rest as unrecovered (a balance never goes negative);
// recoveries take back an earlier reversal's unrecovered rest, at most what
// the balance holds (AmountCents is lowered to that; with nothing to take,
// nothing is written and the returned entry has no ID).
func (t *Tx) AppendLedger(ctx context.Context, e LedgerEntry, now time.Time) (LedgerEntry, error) {
	if e.Store == "" {
		if err := t.entryStore(ctx, &e); err != nil {
			return LedgerEntry{}, err
		}
	}
	bal, err := t.lockAccount(ctx, e.Store, e.Account, now)
	if err != nil {
		return LedgerEntry{}, err
	}
	switch e.Type {
	case payment.EntryCredit:
		bal += e.AmountCents
	case payment.EntryDebit:
		if bal < e.AmountCents {
			return LedgerEntry{}, ErrInsufficientFunds
		}
		bal -= e.AmountCents
	case payment.EntryRecovery:
		e.AmountCents = min(e.AmountCents, bal)
		if e.AmountCents <= 0 {
			return LedgerEntry{}, nil
		}
		bal -= e.AmountCents
	case payment.EntryReversal:
		if bal < e.AmountCents {
			e.UnrecoveredCents = e.AmountCents - bal
			bal = 0
		} else {
			bal -= e.AmountCents
		}
	}
	if e.ID == "" {
		e.ID = NewID("le")
	}
	e.BalanceAfter, e.CreatedAt = bal, now
	err = t.tx.QueryRow(ctx, `INSERT INTO ledger_entries (id, account, type, amount_cents, reference, intent_id, transfer_id,
		balance_after_cents, unrecovered_cents, created_at, resolution_seq, store_id)
		VALUES ($1, $2, $3, $4, $5, NULLIF($6, ''), NULLIF($7, ''), $8, $9, $10, NULLIF($11, 0), $12) RETURNING seq`,
		e.ID, e.Account, e.Type, e.AmountCents, e.Reference, e.IntentID, e.TransferID, bal, e.UnrecoveredCents, now, e.ResolutionSeq, e.Store).Scan(&e.Seq)
	if err != nil {
		return LedgerEntry{}, translate(err)
	}
	if _, err := t.tx.Exec(ctx, `UPDATE accounts SET balance_cents = $2, updated_at = $3 WHERE store_id = $4 AND account = $1`, e.Account, bal, now, e.Store); err != nil {
		return LedgerEntry{}, translate(err)
	}
	return e, nil
}

// entryStore fills an entry's store from its intent, else its transfer:
// an account's money never crosses into another store.
func (t *Tx) entryStore(ctx context.Context, e *LedgerEntry) error {
	var err error
	switch {
	case e.IntentID != "":
		err = t.tx.QueryRow(ctx, `SELECT store_id FROM intents WHERE id = $1`, e.IntentID).Scan(&e.Store)
	case e.TransferID != "":
		err = t.tx.QueryRow(ctx, `SELECT store_id FROM transfers WHERE id = $1`, e.TransferID).Scan(&e.Store)
	default:
		return fmt.Errorf("ledger entry for %q: no store, intent or transfer", e.Account)
	}
	return translate(err)
}

// PayableUnrecovered returns what the reversals of the credits of an
// intent's payable (the top-up, through any of its intents) could not take
// back and no recovery has taken since, in cents. The debt is the top-up's:
// a top-up paid through one intent, reverted after the customer spent part
// of it, and paid again through another intent owes that part as much as
// one paid again through the same intent.
func (t *Tx) PayableUnrecovered(ctx context.Context, intentID string) (int64, error) {
	var n int64
	err := t.tx.QueryRow(ctx, `SELECT coalesce(sum(unrecovered_cents) FILTER (WHERE type = 'reversal'), 0)
		- coalesce(sum(amount_cents) FILTER (WHERE type = 'recovery'), 0)
		FROM ledger_entries WHERE intent_id IN (
			SELECT id FROM intents WHERE payable_id = (SELECT payable_id FROM intents WHERE id = $1))`, intentID).Scan(&n)
	return n, translate(err)
}

// NetIntentCredits returns credits minus reversals recorded for an intent
// (0 or 1): a paid top-up is credited exactly once net.
func (t *Tx) NetIntentCredits(ctx context.Context, intentID string) (int, error) {
	var n int
	err := t.tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE type = 'credit') - count(*) FILTER (WHERE type = 'reversal')
		FROM ledger_entries WHERE intent_id = $1`, intentID).Scan(&n)
	return n, translate(err)
}

// NetResolutionCredits returns credits minus reversals recorded for one
// finance decision (a credit_account, 0 or 1): such a credit stands exactly
// once net while its transfer is confirmed on the chain.
func (t *Tx) NetResolutionCredits(ctx context.Context, seq int64) (int, error) {
	var n int
	err := t.tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE type = 'credit') - count(*) FILTER (WHERE type = 'reversal')
		FROM ledger_entries WHERE resolution_seq = $1`, seq).Scan(&n)
	return n, translate(err)
}

// ResolutionUnrecovered returns what the reversals of a decision's credit
// could not take back and no recovery has taken since, in cents.
func (t *Tx) ResolutionUnrecovered(ctx context.Context, seq int64) (int64, error) {
	var n int64
	err := t.tx.QueryRow(ctx, `SELECT coalesce(sum(unrecovered_cents) FILTER (WHERE type = 'reversal'), 0)
		- coalesce(sum(amount_cents) FILTER (WHERE type = 'recovery'), 0)
		FROM ledger_entries WHERE resolution_seq = $1`, seq).Scan(&n)
	return n, translate(err)
}

package finance

import (
	"context"
	"errors"
	"time"

	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// BalanceView is GET /v1/accounts/{account}/balance.
type BalanceView struct {
	Account        string `json:"account"`
	AvailableUSD   string `json:"available_usd"`
	PendingUSD     string `json:"pending_usd"`
	UnrecoveredUSD string `json:"unrecovered_usd,omitempty"`
}

// LedgerPage is GET /v1/accounts/{account}/ledger.
type LedgerPage struct {
	Entries []views.LedgerEntry `json:"entries"`
	Next    *string             `json:"next"`
}

// DebitRequest is the body of POST /v1/accounts/{account}/debits.
type DebitRequest struct {
	Reference string `json:"reference"`
	AmountUSD string `json:"amount_usd"`
}

// Balance returns an account's available and pending balance.
func (s *Service) Balance(ctx context.Context, shop, account string) (BalanceView, error) {
	if !intents.ValidName(account) {
		return BalanceView{}, intents.Invalid("account", intents.InvalidRequest, "account must be 1-200 characters of letters, digits and ._:/#-")
	}
	b, err := s.store.Balance(ctx, shop, account)
	if err != nil {
		return BalanceView{}, err
	}
	v := BalanceView{Account: account, AvailableUSD: payment.Cents(b.AvailableCents).String(),
		PendingUSD: payment.Cents(b.PendingCents).String()}
	if b.UnrecoveredCents > 0 {
		v.UnrecoveredUSD = payment.Cents(b.UnrecoveredCents).String()
	}
	return v, nil
}

// Ledger returns one page of an account's entries, oldest first, after the
// entry id after ("" from the first).
func (s *Service) Ledger(ctx context.Context, shop, account, after string, limit int) (LedgerPage, error) {
	if !intents.ValidName(account) {
		return LedgerPage{}, intents.Invalid("account", intents.InvalidRequest, "account must be 1-200 characters of letters, digits and ._:/#-")
	}
	es, err := s.store.LedgerEntries(ctx, shop, account, after, limit)
	if errors.Is(err, store.ErrNotFound) {
		return LedgerPage{}, intents.Invalid("after", intents.InvalidRequest, "after=%q is not an entry of account %s", after, account)
	}
	if err != nil {
		return LedgerPage{}, err
	}
	page := LedgerPage{Entries: []views.LedgerEntry{}}
	for _, e := range es {
		page.Entries = append(page.Entries, views.LedgerEntryOf(e))
	}
	if len(es) == limit && limit > 0 {
		page.Next = &es[len(es)-1].ID
	}
	return page, nil
}

// Debit pays the order req.Reference from account's balance in one
// transaction: it creates (or finds) the order payable, appends a debit
// entry under the account's row lock, marks the payable paid by that entry
// and appends a ledger.debited event. It returns the entry (intents.Created).
//
// It is idempotent twice over: the same Idempotency-Key with the same body
// returns the first response, and a reference already paid by a debit of
// the same account and amount returns that debit (intents.Applied) without debiting
// again. A short balance is insufficient_funds and changes nothing; an
// order paid by an intent is already_paid (before any other check); an order with a crypto payment
// that covers it and waits for confirmations is payment_in_progress (the
// customer would pay twice); a reference known with another amount or
// account is a conflict.
func (s *Service) Debit(ctx context.Context, shop, account string, req DebitRequest, idem *intents.Idem) (intents.Result[views.LedgerEntry], error) {
	if !intents.ValidName(account) {
		return intents.Result[views.LedgerEntry]{}, intents.Invalid("account", intents.InvalidRequest, "account must be 1-200 characters of letters, digits and ._:/#-")
	}
	if !intents.ValidName(req.Reference) {
		return intents.Result[views.LedgerEntry]{}, intents.Invalid("reference", intents.InvalidRequest, "reference must be 1-200 characters of letters, digits and ._:/#-")
	}
	usd, err := payment.ParseUSD(req.AmountUSD)
	if err != nil || usd <= 0 {
		return intents.Result[views.LedgerEntry]{}, intents.Invalid("amount_usd", intents.InvalidAmount, "amount_usd must be a positive decimal string with at most 2 decimals, like \"249.00\"")
	}
	return intents.Idempotent(ctx, s.store, s.now, idem, func(tx *store.Tx, now time.Time) (intents.Outcome, views.LedgerEntry, error) {
		p, err := tx.EnsurePayable(ctx, store.Payable{Store: shop, Kind: payment.Order, Reference: req.Reference, Account: account,
			AmountCents: int64(usd), CreatedAt: now})
		if err != nil {
			return 0, views.LedgerEntry{}, err
		}
		// Paid in crypto: that is what happened, whatever amount or
		// account this debit names.
		if p.PaidAt != nil && p.PaidByEntry == "" {
			return 0, views.LedgerEntry{}, intents.Fail(intents.AlreadyPaid, "order %s is already paid by intent %s; nothing was debited", p.Reference, p.PaidByIntent)
		}
		if p.AmountCents != int64(usd) || p.Account != account {
			return 0, views.LedgerEntry{}, intents.Fail(intents.Conflict, "order %s already exists with amount_usd %s and account %q; a payable keeps its amount and account",
				p.Reference, payment.Cents(p.AmountCents), p.Account)
		}
		if p.PaidByEntry != "" {
			e, err := tx.LedgerEntryByID(ctx, p.PaidByEntry)
			if err != nil {
				return 0, views.LedgerEntry{}, err
			}
			return intents.Applied, views.LedgerEntryOf(e), nil
		}
		// A crypto payment that covers the order is on its way: debiting
		// now would make the customer pay twice.
		if id, err := tx.PaymentInProgress(ctx, p.ID); err != nil {
			return 0, views.LedgerEntry{}, err
		} else if id != "" {
			return 0, views.LedgerEntry{}, intents.Fail(intents.PaymentInProgress, "order %s has a crypto payment in progress: intent %s has received the full amount and waits for confirmations; nothing was debited (wait for intent.paid, or debit again if the intent leaves detected without being paid)",
				p.Reference, id)
		}
		e, err := tx.AppendLedger(ctx, store.LedgerEntry{Store: store.StoreOr(shop), Account: account, Type: payment.EntryDebit, AmountCents: int64(usd),
			Reference: req.Reference}, now)
		if errors.Is(err, store.ErrInsufficientFunds) {
			return 0, views.LedgerEntry{}, intents.Fail(intents.InsufficientFunds, "account %s has less than %s USD available; nothing was debited", account, usd)
		}
		if err != nil {
			return 0, views.LedgerEntry{}, err
		}
		if err := tx.SetPayablePaidByEntry(ctx, p.ID, e.ID, now); err != nil {
			return 0, views.LedgerEntry{}, err
		}
		// The order's intents now see it paid elsewhere: what they received
		// becomes a duplicate for finance at once.
		if err := s.decider.RedecidePayable(ctx, tx, p.ID, now); err != nil {
			return 0, views.LedgerEntry{}, err
		}
		view := views.LedgerEntryOf(e)
		if err := tx.QueueAppendStoreEvent(shop, payment.EventLedgerDebited, account, view, now); err != nil {
			return 0, views.LedgerEntry{}, err
		}
		return intents.Created, view, nil
	})
}

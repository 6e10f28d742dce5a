package views

import (
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// LedgerEntry is a ledger entry as the API shows it.
type LedgerEntry struct {
	ID              string                  `json:"id"`
	Account         string                  `json:"account"`
	Type            payment.LedgerEntryType `json:"type"`
	AmountUSD       string                  `json:"amount_usd"`
	Reference       string                  `json:"reference"`
	IntentID        *string                 `json:"intent_id"`
	TransferID      *string                 `json:"transfer_id"`
	BalanceAfterUSD string                  `json:"balance_after_usd"`
	UnrecoveredUSD  string                  `json:"unrecovered_usd,omitempty"`
	CreatedAt       time.Time               `json:"created_at"`
}

// LedgerEntryOf renders a ledger entry.
func LedgerEntryOf(e store.LedgerEntry) LedgerEntry {
	v := LedgerEntry{ID: e.ID, Account: e.Account, Type: e.Type, AmountUSD: payment.Cents(e.AmountCents).String(),
		Reference: e.Reference, IntentID: strp(e.IntentID), TransferID: strp(e.TransferID),
		BalanceAfterUSD: payment.Cents(e.BalanceAfter).String(), CreatedAt: e.CreatedAt.UTC()}
	if e.UnrecoveredCents > 0 {
		v.UnrecoveredUSD = payment.Cents(e.UnrecoveredCents).String()
	}
	return v
}

package views

import (
	"time"

	"github.com/paywatch/paywatch/payment"
)

// PagePayable is a payable made for the payment page (POST /v1/payables),
// as the API shows it: PaymentPageURL is where the storefront sends its
// customer, who picks the method there (docs/integrating.md, "The payment page"). A
// capability, as an intent's page URL is.
type PagePayable struct {
	// Store is the payable's store (never in the JSON: a store's key
	// learns nothing of stores; the page shows the store's look).
	Store          string              `json:"-"`
	Kind           payment.PayableKind `json:"kind"`
	Reference      string              `json:"reference"`
	Account        *string             `json:"account"`
	AmountUSD      string              `json:"amount_usd"`
	Status         string              `json:"status"`
	PaymentPageURL string              `json:"payment_page_url"`
	ReturnURL      string              `json:"return_url,omitempty"`
	Locale         string              `json:"locale,omitempty"`
	CreatedAt      time.Time           `json:"created_at"`
}

package views

import (
	"slices"
	"strings"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// Rate is the locked rate of an intent.
type Rate struct {
	USDPerUnit string    `json:"usd_per_unit"`
	Sources    []string  `json:"sources"`
	At         time.Time `json:"at"`
}

// Transfer is a transfer as the API shows it.
type Transfer struct {
	ID string `json:"id"`
	// Store is the transfer's store (never in the JSON, as Intent.Store).
	Store           string                 `json:"-"`
	Network         string                 `json:"network"`
	Asset           string                 `json:"asset"`
	Method          string                 `json:"method,omitempty"`
	TxID            string                 `json:"txid"`
	Index           int64                  `json:"index"`
	Address         string                 `json:"address"`
	Amount          string                 `json:"amount"`
	AmountBaseUnits string                 `json:"amount_base_units"`
	Confirmations   int64                  `json:"confirmations"`
	Required        int                    `json:"confirmations_required"`
	Status          payment.TransferStatus `json:"status"`
	Classification  payment.Classification `json:"classification"`
	IntentID        *string                `json:"intent_id"`
	FirstSeenAt     time.Time              `json:"first_seen_at"`
	BlockHeight     *int64                 `json:"block_height"`
	BlockHash       *string                `json:"block_hash"`
	Credited        bool                   `json:"credited"`
	// Settled is the part that pays its intent; Unresolved what neither
	// pays it nor is covered by a finance decision.
	Settled    string `json:"settled_base_units"`
	Unresolved string `json:"unresolved_base_units"`
	// Resolution is the newest of Resolutions, the live decisions.
	Resolution  *Resolution  `json:"resolution"`
	Resolutions []Resolution `json:"resolutions"`
	// Coinbase marks an output of a coinbase transaction (Bitcoin,
	// Litecoin), which pays only after 100 confirmations.
	Coinbase bool `json:"coinbase,omitempty"`
}

// Resolution is finance's decision on a transfer.
type Resolution struct {
	Action     string `json:"action"`
	Covers     string `json:"covers_base_units,omitempty"`
	Note       string `json:"note"`
	Actor      string `json:"actor"`
	IntentID   string `json:"intent_id,omitempty"`
	Account    string `json:"account,omitempty"`
	AmountUSD  string `json:"amount_usd,omitempty"`
	RefundTxID string `json:"refund_txid,omitempty"`
	// USDPerUnit is the rate a credit_account used, ReferenceUSDPerUnit
	// the rate book's quote at the transfer's time it was checked against
	// (absent: none). RateOverride is true when the rate was outside the
	// bound and finance overrode it, OverrideReason why.
	USDPerUnit          string    `json:"usd_per_unit,omitempty"`
	ReferenceUSDPerUnit string    `json:"reference_usd_per_unit,omitempty"`
	RateOverride        bool      `json:"rate_override,omitempty"`
	OverrideReason      string    `json:"override_reason,omitempty"`
	At                  time.Time `json:"at"`
}

// Intent is an intent as the API shows it (api/openapi.yaml, schema Intent).
// PaymentPageURL is its hosted payment page (package checkout), absent when
// the page is off: a capability, whoever has it sees the payment
// instructions and status. ReturnURL is where that page's button leads once
// paid, as the storefront gave it (absent: no button).
type Intent struct {
	ID string `json:"id"`
	// Store is the intent's store (never in the JSON: a store's key
	// knows its store, and the page reads it to show the store's look).
	Store                 string               `json:"-"`
	Kind                  payment.PayableKind  `json:"kind"`
	Reference             string               `json:"reference"`
	Account               *string              `json:"account"`
	Method                string               `json:"method"`
	Network               string               `json:"network"`
	Asset                 string               `json:"asset"`
	AmountUSD             string               `json:"amount_usd"`
	Amount                string               `json:"amount"`
	AmountBaseUnits       string               `json:"amount_base_units"`
	Address               string               `json:"address"`
	PaymentURI            string               `json:"payment_uri"`
	PaymentPageURL        string               `json:"payment_page_url,omitempty"`
	ReturnURL             string               `json:"return_url,omitempty"`
	Locale                string               `json:"locale,omitempty"`
	Rate                  Rate                 `json:"rate"`
	ExpiresAt             time.Time            `json:"expires_at"`
	Status                payment.IntentStatus `json:"status"`
	Overpaid              bool                 `json:"overpaid"`
	Late                  bool                 `json:"late"`
	ConfirmationsRequired int                  `json:"confirmations_required"`
	ReportedAt            *time.Time           `json:"reported_at"`
	DetectedAt            *time.Time           `json:"detected_at"`
	PaidAt                *time.Time           `json:"paid_at"`
	PaidUSD               string               `json:"paid_usd"`
	Received              string               `json:"received"`
	ReceivedBaseUnits     string               `json:"received_base_units"`
	RenewedFrom           *string              `json:"renewed_from"`
	SupersededBy          *string              `json:"superseded_by"`
	Transfers             []Transfer           `json:"transfers"`
	CreatedAt             time.Time            `json:"created_at"`
}

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// TransferOf renders a stored transfer; tip is the network's node height.
func TransferOf(t store.Transfer, tip int64) Transfer {
	dec := Decimals(t.Network, t.Asset)
	v := Transfer{
		ID: t.ID, Store: t.Store, Network: t.Network, Asset: payment.AssetName(payment.Network(t.Network), payment.Asset(t.Asset)), TxID: t.TxID, Index: t.Index, Address: t.Address,
		Amount: payment.FormatUnits(t.Amount, dec), AmountBaseUnits: t.Amount.String(),
		Required: t.ConfirmationsRequired, Status: t.Status, Classification: t.Classification,
		IntentID: strp(t.IntentID), FirstSeenAt: t.FirstSeenAt.UTC(), BlockHeight: t.BlockHeight,
		BlockHash: strp(t.BlockHash), Credited: t.Credited, Coinbase: t.Coinbase,
	}
	if m, ok := payment.MethodFor(payment.Network(t.Network), payment.Asset(t.Asset)); ok {
		v.Method = string(m.Method)
	}
	if t.BlockHeight != nil && t.Status != payment.TransferOrphaned && tip >= *t.BlockHeight {
		v.Confirmations = tip - *t.BlockHeight + 1
	}
	v.Settled, v.Unresolved = "0", t.Unresolved().String()
	if t.Settled != nil {
		v.Settled = t.Settled.String()
	}
	v.Resolutions = make([]Resolution, 0, len(t.Resolutions))
	for _, r := range t.Resolutions {
		rv := Resolution{Action: r.Action, Note: r.Note, Actor: r.Actor, IntentID: r.IntentID,
			Account: r.Account, RefundTxID: r.RefundTxID, At: r.CreatedAt.UTC(), USDPerUnit: r.USDPerUnit,
			ReferenceUSDPerUnit: r.ReferenceUSDPerUnit, RateOverride: r.OverrideReason != "", OverrideReason: r.OverrideReason}
		if r.AmountCents != nil {
			rv.AmountUSD = payment.Cents(*r.AmountCents).String()
		}
		if r.Covers != nil {
			rv.Covers = r.Covers.String()
		}
		v.Resolutions = append(v.Resolutions, rv)
	}
	if n := len(v.Resolutions); n > 0 {
		v.Resolution = &v.Resolutions[n-1]
	}
	return v
}

// IntentOf renders a stored intent with its transfers.
func IntentOf(in store.Intent, transfers []store.Transfer, tip int64, uri string) Intent {
	dec := Decimals(in.Network, in.Asset)
	v := Intent{
		ID: in.ID, Store: in.Store, Kind: in.Kind, Reference: in.Reference, Account: strp(in.Account),
		Method: in.Method, Network: in.Network, Asset: assetName(in.Method, in.Asset),
		AmountUSD: payment.Cents(in.AmountCents).String(), Amount: payment.FormatUnits(in.Amount, dec),
		AmountBaseUnits: in.Amount.String(), Address: in.Address, PaymentURI: uri, ReturnURL: in.ReturnURL, Locale: in.Locale,
		Rate:      Rate{USDPerUnit: in.Rate, Sources: in.RateSources, At: in.RateAt.UTC()},
		ExpiresAt: in.ExpiresAt.UTC(), Status: in.Status, Overpaid: in.Overpaid, Late: in.Late,
		ConfirmationsRequired: in.ConfirmationsRequired, ReportedAt: utc(in.ReportedAt),
		DetectedAt: utc(in.DetectedAt), PaidAt: utc(in.PaidAt),
		PaidUSD:  USDValue(in.ConfirmedSum, in.Rate, dec).String(),
		Received: payment.FormatUnits(in.Received, dec), ReceivedBaseUnits: in.Received.String(),
		RenewedFrom: strp(in.RenewedFrom), SupersededBy: strp(in.SupersededBy),
		Transfers: []Transfer{}, CreatedAt: in.CreatedAt.UTC(),
	}
	if in.Status == payment.IntentPaid && USDValue(in.ConfirmedSum, in.Rate, dec) > payment.Cents(in.AmountCents) && !in.Overpaid {
		// Rounding the amount up to display precision can make the USD value a
		// cent above the order; the order is what was paid.
		v.PaidUSD = payment.Cents(in.AmountCents).String()
	}
	// First seen first, then by id, whatever order they were given in: an
	// event body renders the same list as a read.
	sorted := slices.Clone(transfers)
	slices.SortStableFunc(sorted, func(a, b store.Transfer) int {
		if c := a.FirstSeenAt.Compare(b.FirstSeenAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	for _, t := range sorted {
		v.Transfers = append(v.Transfers, TransferOf(t, tip))
	}
	return v
}

// assetName shows the native asset by its symbol (BTC, ETH…), tokens by theirs.
func assetName(method, asset string) string {
	if m, ok := payment.LookupMethod(payment.Method(method)); ok {
		return m.Symbol
	}
	return asset
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

package intents

import (
	"math/big"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// RateView is the locked rate of an intent.
type RateView struct {
	USDPerUnit string    `json:"usd_per_unit"`
	Sources    []string  `json:"sources"`
	At         time.Time `json:"at"`
}

// TransferView is a transfer as the API shows it.
type TransferView struct {
	ID              string                 `json:"id"`
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
	Resolution      *ResolutionView        `json:"resolution"`
}

// ResolutionView is finance's decision on a transfer.
type ResolutionView struct {
	Action     string    `json:"action"`
	Note       string    `json:"note"`
	Actor      string    `json:"actor"`
	IntentID   string    `json:"intent_id,omitempty"`
	Account    string    `json:"account,omitempty"`
	AmountUSD  string    `json:"amount_usd,omitempty"`
	RefundTxID string    `json:"refund_txid,omitempty"`
	At         time.Time `json:"at"`
}

// IntentView is an intent as the API shows it (API.md "Intents").
type IntentView struct {
	ID                    string               `json:"id"`
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
	Rate                  RateView             `json:"rate"`
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
	Transfers             []TransferView       `json:"transfers"`
	CreatedAt             time.Time            `json:"created_at"`
}

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// decimalsOf returns the decimals of an asset on a network.
func decimalsOf(network, asset string) int {
	if m, ok := payment.MethodFor(payment.Network(network), payment.Asset(asset)); ok {
		return m.Decimals
	}
	return 0
}

// usdValue converts base units to cents at a decimal rate, rounding down
// (what was received is never overstated).
func usdValue(units *big.Int, rate string, decimals int) payment.Cents {
	r, ok := new(big.Rat).SetString(rate)
	if !ok || units == nil {
		return 0
	}
	v := new(big.Rat).SetInt(units)
	v.Mul(v, r)
	v.Mul(v, big.NewRat(100, 1))
	v.Quo(v, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)))
	q := new(big.Int).Quo(v.Num(), v.Denom())
	if !q.IsInt64() {
		return 0
	}
	return payment.Cents(q.Int64())
}

// TransferViewOf renders a stored transfer; tip is the network's node height.
func TransferViewOf(t store.Transfer, tip int64) TransferView {
	dec := decimalsOf(t.Network, t.Asset)
	v := TransferView{
		ID: t.ID, Network: t.Network, Asset: t.Asset, TxID: t.TxID, Index: t.Index, Address: t.Address,
		Amount: payment.FormatUnits(t.Amount, dec), AmountBaseUnits: t.Amount.String(),
		Required: t.ConfirmationsRequired, Status: t.Status, Classification: t.Classification,
		IntentID: strp(t.IntentID), FirstSeenAt: t.FirstSeenAt.UTC(), BlockHeight: t.BlockHeight,
		BlockHash: strp(t.BlockHash), Credited: t.Credited,
	}
	if m, ok := payment.MethodFor(payment.Network(t.Network), payment.Asset(t.Asset)); ok {
		v.Method = string(m.Method)
	}
	if t.BlockHeight != nil && t.Status != payment.TransferOrphaned && tip >= *t.BlockHeight {
		v.Confirmations = tip - *t.BlockHeight + 1
	}
	if r := t.Resolution; r != nil {
		v.Resolution = &ResolutionView{Action: r.Action, Note: r.Note, Actor: r.Actor, IntentID: r.IntentID,
			Account: r.Account, RefundTxID: r.RefundTxID, At: r.CreatedAt.UTC()}
		if r.AmountCents != nil {
			v.Resolution.AmountUSD = payment.Cents(*r.AmountCents).String()
		}
	}
	return v
}

// IntentViewOf renders a stored intent with its transfers.
func IntentViewOf(in store.Intent, transfers []store.Transfer, tip int64, uri string) IntentView {
	dec := decimalsOf(in.Network, in.Asset)
	v := IntentView{
		ID: in.ID, Kind: in.Kind, Reference: in.Reference, Account: strp(in.Account),
		Method: in.Method, Network: in.Network, Asset: assetName(in.Method, in.Asset),
		AmountUSD: payment.Cents(in.AmountCents).String(), Amount: payment.FormatUnits(in.Amount, dec),
		AmountBaseUnits: in.Amount.String(), Address: in.Address, PaymentURI: uri,
		Rate:      RateView{USDPerUnit: in.Rate, Sources: in.RateSources, At: in.RateAt.UTC()},
		ExpiresAt: in.ExpiresAt.UTC(), Status: in.Status, Overpaid: in.Overpaid, Late: in.Late,
		ConfirmationsRequired: in.ConfirmationsRequired, ReportedAt: utc(in.ReportedAt),
		DetectedAt: utc(in.DetectedAt), PaidAt: utc(in.PaidAt),
		PaidUSD:  usdValue(in.ConfirmedSum, in.Rate, dec).String(),
		Received: payment.FormatUnits(in.Received, dec), ReceivedBaseUnits: in.Received.String(),
		RenewedFrom: strp(in.RenewedFrom), SupersededBy: strp(in.SupersededBy),
		Transfers: []TransferView{}, CreatedAt: in.CreatedAt.UTC(),
	}
	if in.Status == payment.IntentPaid && usdValue(in.ConfirmedSum, in.Rate, dec) > payment.Cents(in.AmountCents) && !in.Overpaid {
		// Rounding the amount up to display precision can make the USD value a
		// cent above the order; the order is what was paid.
		v.PaidUSD = payment.Cents(in.AmountCents).String()
	}
	for _, t := range transfers {
		v.Transfers = append(v.Transfers, TransferViewOf(t, tip))
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

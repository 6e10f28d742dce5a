package finance

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"time"

	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// The finance resolution actions of api/openapi.yaml.
const (
	ActionCreditIntent  = "credit_intent"
	ActionCreditAccount = "credit_account"
	ActionRefunded      = "refunded"
	ActionIgnore        = "ignore"
)

// ResolveRequest is the body of POST /v1/transfers/{id}/resolve.
type ResolveRequest struct {
	Action     string `json:"action"`
	Note       string `json:"note"`
	IntentID   string `json:"intent_id,omitempty"`
	Account    string `json:"account,omitempty"`
	RefundTxID string `json:"refund_txid,omitempty"`
	// USDPerUnit is the rate credit_account uses for a transfer that has no
	// locked rate of its own (unknown address, wrong asset, or late: a lock
	// ends at the intent's deadline), bound to the rate book's quote at the
	// transfer's time; without it that quote is used. Sent for a transfer
	// whose rate is locked it is refused (invalid_request).
	USDPerUnit string `json:"usd_per_unit,omitempty"`
	// Override accepts a USDPerUnit outside the bound of the rate book's
	// quote at the transfer's time (or with no quote to check it against),
	// for a credit of at most the configured maximum (Bounds.MaxOverride).
	Override *Override `json:"override,omitempty"`
	// Store is the store of the key deciding ("": every store): another
	// store's transfer is not found, as one that does not exist. Set by
	// the caller from the key, never from the body.
	Store string `json:"-"`
}

// Override is the explicit acceptance of a rate the rate book does not
// confirm; Reason is required and kept with the decision.
type Override struct {
	Reason string `json:"reason"`
}

// InboxPage is GET /v1/transfers.
type InboxPage struct {
	Transfers []views.Transfer `json:"transfers"`
	Next      *string          `json:"next"`
}

// Inbox lists the transfers that need (or got) a finance decision, newest
// first.
func (s *Service) Inbox(ctx context.Context, f store.InboxFilter) (InboxPage, error) {
	switch f.Status {
	case "":
		f.Status = "unresolved"
	case "unresolved", "resolved", "all":
	default:
		return InboxPage{}, intents.Invalid("status", intents.InvalidRequest, "status must be unresolved, resolved or all")
	}
	if f.Network != "" && !payment.Network(f.Network).Valid() {
		return InboxPage{}, intents.Invalid("network", intents.InvalidRequest, "unknown network %q", f.Network)
	}
	if f.Classification != "" && !payment.Classification(f.Classification).Valid() {
		return InboxPage{}, intents.Invalid("classification", intents.InvalidRequest, "unknown classification %q", f.Classification)
	}
	trs, err := s.store.InboxTransfers(ctx, f)
	if errors.Is(err, store.ErrNotFound) {
		return InboxPage{}, intents.Invalid("after", intents.InvalidRequest, "after=%q is not a transfer id", f.After)
	}
	if err != nil {
		return InboxPage{}, err
	}
	page := InboxPage{Transfers: []views.Transfer{}}
	var tips map[string]int64
	if len(trs) > 0 {
		// Every network's node height in one read (a network without a
		// cursor counts from 0, as NodeHeight answers).
		if tips, err = s.store.NodeHeights(ctx); err != nil {
			return InboxPage{}, err
		}
	}
	for _, t := range trs {
		page.Transfers = append(page.Transfers, views.TransferOf(t, tips[t.Network]))
	}
	if f.Limit > 0 && len(trs) == f.Limit {
		page.Next = &trs[len(trs)-1].ID
	}
	return page, nil
}

// Parts divides a transfer's amount as the books count it: settled is
// what pays its intent (the matcher's decision), resolved what finance's
// decisions cover, unresolved the rest, which finance still has to decide
// (settled + resolved + unresolved = amount). Excluded is true for an
// orphaned transfer that never paid anything (classification other than
// reverted): the money is not on the chain, so it counts in no sum.
func Parts(t store.Transfer) (settled, resolved, unresolved *big.Int, excluded bool) {
	zero := func() *big.Int { return new(big.Int) }
	if t.Status == payment.TransferOrphaned && t.Classification != payment.Reverted {
		return zero(), zero(), zero(), true
	}
	settled, resolved = orZero(t.Settled), orZero(t.Resolved)
	return settled, resolved, t.Unresolved(), false
}

func orZero(x *big.Int) *big.Int {
	if x == nil {
		return new(big.Int)
	}
	return new(big.Int).Set(x)
}

// Resolve records finance's decision on a transfer, in one transaction with
// its effects, the decision of the intents it touches and a
// transfer.resolved event. A decision covers what of the transfer is still
// unresolved (Parts): the whole transfer, or the surplus of an overpayment
// on top of what pays its intent; a later decision may cover what becomes
// unresolved afterwards (the rest of a transfer whose partner left the
// chain). Every decision decides the transfer's intent again at once.
//   - credit_intent counts the transfer for the intent (SetCredited, then the
//     matcher): the intent may become paid and a top-up credited. Refused
//     when the transfer's network or asset is not the intent's, the
//     intent's payable is already paid, or the transfer is orphaned or not
//     confirmed yet: finance decides on money that is on the chain, and a
//     credit that completes the amount pays the intent in this transaction,
//     under the payable's lock. Should the credited transfer later leave the
//     chain and come back after the payable was paid by other means, the
//     matcher makes it a duplicate and the decision is voided (the transfer
//     is a finance item again); it never fails a scan.
//   - credit_account credits the USD value of the unresolved part (the
//     whole transfer, or an overpayment's surplus) to an account: at the locked
//     rate of the intent it went to when it is in that intent's asset and
//     came by its deadline (usd_per_unit is then refused), else at
//     req.USDPerUnit within the rate bound, else at the rate book's quote
//     of the transfer's time (creditAccountValue). Refused, like
//     credit_intent, for a transfer that is orphaned or not confirmed yet.
//     The credit then follows the transfer on the chain: reversed if it
//     leaves it, credited again once it is confirmed again (FollowChain).
//   - refunded records the refund transaction (refund_txid required,
//     trimmed, with the shape of a transaction id of the transfer's network).
//   - ignore records the decision only (dust, spam).
//
// The note is required; actor is who decided (the API key name, or
// "cli:<user>"). The result is the transfer after the decision (intents.Applied).
// A transfer with nothing unresolved (it settles its intent, or decisions
// cover the rest) has nothing to resolve, and a partial payment of an
// intent still waiting for the rest (awaiting_payment, detected) is not a
// finance item yet (conflict).
func (s *Service) Resolve(ctx context.Context, transferID string, req ResolveRequest, actor string, idem *intents.Idem) (intents.Result[views.Transfer], error) {
	if res, done, err := intents.Replay[views.Transfer](ctx, s.store, idem); done || err != nil {
		return res, err
	}
	req.Note = strings.TrimSpace(req.Note)
	if err := checkResolve(req, actor); err != nil {
		return intents.Result[views.Transfer]{}, err
	}
	return intents.Idempotent(ctx, s.store, s.now, idem, func(tx *store.Tx, now time.Time) (intents.Outcome, views.Transfer, error) {
		tr, err := resolvable(ctx, tx, transferID, req.Store)
		if err != nil {
			return 0, views.Transfer{}, err
		}
		res, ledger, reeval, err := s.applyResolution(ctx, tx, tr, req, actor, now)
		if err != nil {
			return 0, views.Transfer{}, err
		}
		view, err := s.afterResolution(ctx, tx, tr, res, ledger, reeval, now)
		return intents.Applied, view, err
	})
}

// checkResolve checks a resolution request before any read.
func checkResolve(req ResolveRequest, actor string) error {
	switch {
	case req.Note == "":
		return intents.Invalid("note", intents.InvalidRequest, "note is required: say why (it is kept with the decision)")
	case len(req.Note) > 2000:
		return intents.Invalid("note", intents.InvalidRequest, "note must be at most 2000 characters")
	case req.Action == ActionCreditIntent && req.IntentID == "":
		return intents.Invalid("intent_id", intents.InvalidRequest, "credit_intent needs intent_id")
	case req.Action == ActionCreditAccount && !intents.ValidName(req.Account):
		return intents.Invalid("account", intents.InvalidRequest, "credit_account needs account (1-200 characters of letters, digits and ._:/#-)")
	case req.Action == ActionRefunded && (strings.TrimSpace(req.RefundTxID) == "" || len(req.RefundTxID) > 200):
		return intents.Invalid("refund_txid", intents.InvalidRequest, "refunded needs refund_txid (the refund transaction id)")
	case req.Action != ActionCreditIntent && req.Action != ActionCreditAccount && req.Action != ActionRefunded && req.Action != ActionIgnore:
		return intents.Invalid("action", intents.InvalidRequest, "action must be credit_intent, credit_account, refunded or ignore")
	case actor == "":
		return intents.Fail(intents.InvalidRequest, "the decision needs an actor")
	}
	if req.Override != nil {
		switch reason := strings.TrimSpace(req.Override.Reason); {
		case req.Action != ActionCreditAccount || req.USDPerUnit == "":
			return intents.Invalid("override", intents.InvalidRequest, "override applies to a credit_account with usd_per_unit only")
		case reason == "":
			return intents.Invalid("override.reason", intents.InvalidRequest, "override needs a reason: say why the rate book's quote is not the value")
		case len(reason) > 2000:
			return intents.Invalid("override.reason", intents.InvalidRequest, "override.reason must be at most 2000 characters")
		}
	}
	if req.USDPerUnit != "" {
		if r, ok := new(big.Rat).SetString(req.USDPerUnit); !ok || r.Sign() <= 0 || strings.ContainsAny(req.USDPerUnit, "/eE") {
			return intents.Invalid("usd_per_unit", intents.InvalidAmount, "usd_per_unit must be a positive decimal like \"2500.10\"")
		}
	}
	return nil
}

// resolvable locks the transfer and checks that it is a finance item now:
// not resolved yet, not settling cleanly, not part of a payment in progress.
func resolvable(ctx context.Context, tx *store.Tx, transferID, shop string) (store.Transfer, error) {
	tr, err := tx.TransferForUpdate(ctx, transferID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && shop != "" && tr.Store != shop) {
		return tr, intents.Fail(intents.NotFound, "no transfer %q", transferID)
	}
	if err != nil {
		return tr, err
	}
	if tr.Classification == payment.Settles {
		return tr, intents.Fail(intents.Conflict, "transfer %s settles intent %s; there is nothing to resolve", tr.ID, tr.IntentID)
	}
	if tr.Unresolved().Sign() == 0 && (tr.Amount.Sign() > 0 || tr.Resolution != nil) {
		r := tr.Resolution
		return tr, intents.Fail(intents.Conflict, "transfer %s was already resolved (%s by %s at %s): no part of it is left undecided; a decision is final",
			tr.ID, r.Action, r.Actor, r.CreatedAt.UTC().Format(time.RFC3339))
	}
	if tr.Classification == payment.Partial && tr.IntentID != "" && tr.Status != payment.TransferOrphaned {
		// A part of a payment still in progress is not a finance item
		// yet (a resolution would make it stop counting under the
		// customer's feet); it is once its intent stops waiting.
		in, err := tx.GetIntent(ctx, tr.IntentID)
		if err != nil {
			return tr, err
		}
		if in.Status.Waiting() {
			return tr, intents.Fail(intents.Conflict, "transfer %s is part of a payment in progress (intent %s is %s); decide once the intent stops waiting for the rest",
				tr.ID, in.ID, in.Status)
		}
	}
	return tr, nil
}

// applyResolution applies the action and records the resolution; it
// returns the resolution, the ledger entry a credit_account wrote, and the
// intents to decide again (the transfer's own, and the one it was credited
// to).
func (s *Service) applyResolution(ctx context.Context, tx *store.Tx, tr store.Transfer, req ResolveRequest, actor string, now time.Time) (store.Resolution, *store.LedgerEntry, []string, error) {
	if req.Action == ActionRefunded {
		id, err := refundTxID(tr.Network, req.RefundTxID)
		if err != nil {
			return store.Resolution{}, nil, nil, intents.Invalid("refund_txid", intents.InvalidRequest, "refund_txid: %v (transfer %s is on %s)", err, tr.ID, tr.Network)
		}
		req.RefundTxID = id
	}
	res := store.Resolution{Action: req.Action, Note: req.Note, Actor: actor, RefundTxID: req.RefundTxID, CreatedAt: now}
	var reeval []string
	if tr.IntentID != "" {
		reeval = append(reeval, tr.IntentID)
	}
	var cents int64
	switch req.Action {
	case ActionCreditIntent:
		c, err := s.creditIntent(ctx, tx, tr, req.IntentID, now)
		if err != nil {
			return res, nil, nil, err
		}
		reeval, res.IntentID, res.AmountCents = append(reeval, req.IntentID), req.IntentID, &c
	default:
		// It covers what is unresolved: the whole transfer, or the surplus
		// on top of what pays its intent.
		res.Covers = tr.Unresolved()
		if req.Action == ActionCreditAccount {
			v, err := s.creditAccountValue(ctx, tx, tr, res.Covers, req, now)
			if err != nil {
				return res, nil, nil, err
			}
			c := v.cents
			res.Account, res.AmountCents, cents = req.Account, &c, c
			res.USDPerUnit, res.ReferenceUSDPerUnit, res.OverrideReason = v.rate, v.reference, v.override
			if v.override != "" {
				s.log.Warn("credit_account at a rate the rate book does not confirm (override)", "transfer", tr.ID,
					"account", req.Account, "usd_per_unit", v.rate, "reference_usd_per_unit", v.reference,
					"amount_cents", c, "actor", actor, "reason", v.override)
			}
		}
	}
	seq, err := tx.InsertResolution(ctx, tr.ID, res)
	if errors.Is(err, store.ErrConflict) {
		return res, nil, nil, intents.Fail(intents.Conflict, "transfer %s is already credited to an intent", tr.ID)
	} else if err != nil {
		return res, nil, nil, err
	}
	res.Seq = seq
	if req.Action != ActionCreditAccount {
		return res, nil, reeval, nil
	}
	e, err := tx.AppendLedger(ctx, store.LedgerEntry{Store: tr.Store, Account: req.Account, Type: payment.EntryCredit, AmountCents: cents,
		Reference: "transfer:" + tr.ID, TransferID: tr.ID, ResolutionSeq: seq}, now)
	if err != nil {
		return res, nil, nil, err
	}
	return res, &e, reeval, nil
}

// afterResolution decides the credited intents again (the matcher and its
// events after the resolution row), then appends the ledger.credited and
// transfer.resolved events, last; it returns the transfer as resolved.
func (s *Service) afterResolution(ctx context.Context, tx *store.Tx, tr store.Transfer, res store.Resolution, ledger *store.LedgerEntry, reeval []string, now time.Time) (views.Transfer, error) {
	if err := s.decider.RedecideAll(ctx, tx, reeval, now); err != nil {
		return views.Transfer{}, err
	}
	fresh, err := tx.GetTransfer(ctx, tr.ID)
	if err != nil {
		return views.Transfer{}, err
	}
	tip, err := tx.NodeHeight(ctx, tr.Network)
	if err != nil {
		return views.Transfer{}, err
	}
	view := views.TransferOf(fresh, tip)
	account := res.Account
	if ledger != nil {
		if err := tx.QueueAppendEvent(payment.EventLedgerCredited, "", tr.ID, ledger.Account, views.LedgerEntryOf(*ledger), now); err != nil {
			return views.Transfer{}, err
		}
	}
	if account == "" && fresh.IntentID != "" {
		in, err := tx.GetIntent(ctx, fresh.IntentID)
		if err != nil {
			return views.Transfer{}, err
		}
		account = in.Account
	}
	if err := tx.QueueAppendEvent(payment.EventTransferResolved, fresh.IntentID, tr.ID, account, view, now); err != nil {
		return views.Transfer{}, err
	}
	return view, nil
}

// creditIntent checks and applies credit_intent; it returns the USD value
// credited (what of the transfer counts, at the intent's rate).
func (s *Service) creditIntent(ctx context.Context, tx *store.Tx, tr store.Transfer, intentID string, now time.Time) (int64, error) {
	in, err := tx.GetIntent(ctx, intentID)
	if errors.Is(err, store.ErrNotFound) {
		return 0, intents.Fail(intents.NotFound, "no intent %q", intentID)
	}
	if err != nil {
		return 0, err
	}
	if in.Store != tr.Store {
		// Another store's intent is as unknown as a missing one: a
		// finance decision never moves value between stores.
		return 0, intents.Fail(intents.NotFound, "no intent %q", intentID)
	}
	if in.Network != tr.Network || in.Asset != tr.Asset {
		return 0, intents.Fail(intents.Conflict, "transfer %s moved %s on %s but intent %s asks for %s on %s; use credit_account or refunded",
			tr.ID, tr.Asset, tr.Network, in.ID, in.Asset, in.Network)
	}
	if tr.Status == payment.TransferOrphaned {
		return 0, intents.Fail(intents.Conflict, "transfer %s is not on the chain any more (orphaned by a reorg); it cannot pay anything", tr.ID)
	}
	if tr.Status != payment.TransferConfirmed {
		return 0, notConfirmed(tr, ActionCreditIntent)
	}
	if tr.Settled != nil && tr.Settled.Sign() > 0 {
		return 0, intents.Fail(intents.Conflict, "transfer %s already pays intent %s; its surplus can be credited to an account, refunded or ignored",
			tr.ID, tr.IntentID)
	}
	p, err := tx.PayableForUpdate(ctx, in.PayableID)
	if err != nil {
		return 0, err
	}
	if p.PaidAt != nil {
		by := p.PaidByIntent
		if by == "" {
			by = "ledger entry " + p.PaidByEntry
		}
		return 0, intents.Fail(intents.AlreadyPaid, "%s %s is already paid (by %s); use credit_account or refunded", p.Kind, p.Reference, by)
	}
	if err := tx.SetCredited(ctx, tr.ID, in.ID, now); err != nil {
		return 0, err
	}
	counts := new(big.Int).Sub(tr.Amount, orZero(tr.Resolved))
	return int64(views.USDValue(counts, in.Rate, views.Decimals(tr.Network, tr.Asset))), nil
}

// notConfirmed is the refusal of a credit for a transfer that has not got
// its confirmations yet (it may still vanish).
func notConfirmed(tr store.Transfer, action string) error {
	where := "in the mempool"
	if tr.Status == payment.TransferConfirming {
		where = "waiting for confirmations"
	}
	return intents.Fail(intents.Conflict, "transfer %s is not confirmed yet (%s, %d required); %s needs a confirmed transfer: decide once it is confirmed",
		tr.ID, where, tr.ConfirmationsRequired, action)
}

// accountValue is what a credit_account credits and at which rate:
// reference is the rate book's quote it was checked against ("" when
// there was none or the rate is the intent's locked rate), override the
// override's reason when the rate was outside the bound.
type accountValue struct {
	cents                     int64
	rate, reference, override string
}

// creditAccountValue checks credit_account and returns the USD value, in
// cents, of the part of the transfer it covers. A transfer in the asset of
// the intent it went to, first seen by that intent's deadline, is worth
// the intent's locked rate, which nothing replaces: a usd_per_unit sent
// with it is refused (invalid_request, naming the field). A rate lock ends
// at the deadline, so a late transfer is valued as one with no locked rate
// (unknown address, wrong asset): at req.USDPerUnit, which must be within
// Bounds.MaxDeviation of the rate book's quote at the transfer's time
// (first seen) or carry req.Override (crediting at most
// Bounds.MaxOverride), else at that quote of its time itself; with no
// quote of its time, usd_per_unit is needed.
func (s *Service) creditAccountValue(ctx context.Context, tx *store.Tx, tr store.Transfer, covers *big.Int, req ResolveRequest, now time.Time) (accountValue, error) {
	var v accountValue
	if tr.Status == payment.TransferOrphaned {
		return v, intents.Fail(intents.Conflict, "transfer %s is not on the chain any more (orphaned by a reorg); there is nothing to credit", tr.ID)
	}
	if tr.Status != payment.TransferConfirmed {
		return v, notConfirmed(tr, ActionCreditAccount)
	}
	dec := views.Decimals(tr.Network, tr.Asset)
	if tr.IntentID != "" {
		in, err := tx.GetIntent(ctx, tr.IntentID)
		if err != nil {
			return v, err
		}
		if lockedFor(in, tr) {
			if req.USDPerUnit != "" {
				return v, intents.Invalid("usd_per_unit", intents.InvalidRequest,
					"transfer %s is worth intent %s's locked rate (%s USD per %s, locked until %s, and the transfer came by then); "+
						"usd_per_unit applies only to a transfer with no locked rate: leave it out",
					tr.ID, in.ID, in.Rate, tr.Asset, in.ExpiresAt.UTC().Format(time.RFC3339))
			}
			v.rate = in.Rate
		}
	}
	m, known := payment.MethodFor(payment.Network(tr.Network), payment.Asset(tr.Asset))
	switch {
	case v.rate != "":
	case req.USDPerUnit != "":
		v.rate = req.USDPerUnit
		ref, err := s.referenceRate(ctx, tx, m.Symbol, known, tr.FirstSeenAt, now)
		if err != nil {
			return v, err
		}
		v.reference = ref
		if ref == "" || !within(req.USDPerUnit, ref, s.bounds.MaxDeviation) {
			if req.Override == nil {
				return v, outOfBounds(tr, req.USDPerUnit, ref, s.bounds)
			}
			v.override = strings.TrimSpace(req.Override.Reason)
		}
	default:
		ref, err := s.referenceRate(ctx, tx, m.Symbol, known, tr.FirstSeenAt, now)
		if err != nil {
			return v, err
		}
		if ref == "" {
			return v, intents.Fail(intents.RateUnavailable,
				"transfer %s has no locked rate and the rate book has no %s quote within %s of its time (first seen %s); give usd_per_unit (and override.reason)",
				tr.ID, symbolOf(tr), s.bounds.Window, tr.FirstSeenAt.UTC().Format(time.RFC3339))
		}
		v.rate = ref
	}
	cents := views.USDValue(covers, v.rate, dec)
	if cents <= 0 {
		return v, intents.Fail(intents.InvalidAmount, "transfer %s (%s base units undecided) is worth less than one cent at %s USD per unit; use ignore",
			tr.ID, covers, v.rate)
	}
	if v.override != "" && int64(cents) > s.bounds.MaxOverride {
		return v, intents.Invalid("override", intents.InvalidAmount,
			"an override credits at most %s USD (finance.max_override_credit_usd); %s USD per unit makes %s USD of transfer %s",
			payment.Cents(s.bounds.MaxOverride), v.rate, cents, tr.ID)
	}
	v.cents = int64(cents)
	return v, nil
}

// lockedFor reports whether the intent's locked rate values the transfer:
// in the intent's asset, and first seen by its deadline (a rate lock ends
// at the deadline; first seen exactly at it counts, as the matcher's
// lateness does).
func lockedFor(in store.Intent, tr store.Transfer) bool {
	return in.Asset == tr.Asset && in.Rate != "" && !tr.FirstSeenAt.After(in.ExpiresAt)
}

// referenceRate is the rate book's quote of symbol at the transfer's time
// at: the recorded quote nearest to it within Bounds.Window, else the
// current quote when at is that recent; "" when there is none.
func (s *Service) referenceRate(ctx context.Context, tx *store.Tx, symbol string, known bool, at, now time.Time) (string, error) {
	if !known {
		return "", nil
	}
	q, err := tx.QuoteNear(ctx, symbol, at, s.bounds.Window)
	if err == nil {
		return q.USDPerUnit, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	if s.quotes == nil || now.Sub(at).Abs() > s.bounds.Window {
		return "", nil
	}
	live, err := s.quotes.Quote(symbol, now)
	if err != nil {
		return "", nil
	}
	return live.Decimal(), nil
}

// within reports whether rate is within dev (a fraction) of ref.
func within(rate, ref string, dev *big.Rat) bool {
	r, ok1 := new(big.Rat).SetString(rate)
	q, ok2 := new(big.Rat).SetString(ref)
	if !ok1 || !ok2 {
		return false
	}
	diff := new(big.Rat).Sub(r, q)
	return diff.Abs(diff).Cmp(new(big.Rat).Mul(dev, q)) <= 0
}

// symbolOf names the rate of a transfer's asset: "BTC/USD", or its
// network and asset when it is no method's.
func symbolOf(tr store.Transfer) string {
	if m, ok := payment.MethodFor(payment.Network(tr.Network), payment.Asset(tr.Asset)); ok {
		return m.Symbol + "/USD"
	}
	return tr.Asset + " on " + tr.Network
}

// outOfBounds is the refusal of a usd_per_unit the rate book does not
// confirm.
func outOfBounds(tr store.Transfer, rate, ref string, b Bounds) error {
	if ref == "" {
		return intents.Invalid("usd_per_unit", intents.InvalidAmount,
			"the rate book has no %s quote within %s of transfer %s (first seen %s) to check usd_per_unit %s against; "+
				"give override.reason to credit it anyway (at most %s USD)",
			symbolOf(tr), b.Window, tr.ID, tr.FirstSeenAt.UTC().Format(time.RFC3339), rate, payment.Cents(b.MaxOverride))
	}
	return intents.Invalid("usd_per_unit", intents.InvalidAmount,
		"usd_per_unit %s is more than %s from the rate book's quote %s at transfer %s's time; "+
			"use the quote, or give override.reason to credit it anyway (at most %s USD)",
		rate, b.MaxDeviation.FloatString(4), ref, tr.ID, payment.Cents(b.MaxOverride))
}

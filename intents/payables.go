package intents

import (
	"context"
	"errors"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// PayableRequest is a storefront's payable for the payment page: what is
// paid (kind, reference, account, amount), and the page's return_url and
// locale; no method, which the customer picks on the page.
type PayableRequest struct {
	Kind      payment.PayableKind `json:"kind"`
	Reference string              `json:"reference"`
	Account   string              `json:"account"`
	AmountUSD string              `json:"amount_usd"`
	ReturnURL string              `json:"return_url,omitempty"`
	Locale    string              `json:"locale,omitempty"`
	// Store is the store of the payable ("": the default store); from the
	// caller's API key, never from the body.
	Store string `json:"-"`
}

// PagePayable is a payable of the page as the page reads it.
type PagePayable struct {
	ID      int64
	Payable views.PagePayable
	// PaidBy is the intent that paid it ("" for none).
	PaidBy string
	// Open are its open intents (awaiting payment before the deadline, or
	// detected), oldest first.
	Open []views.Intent
}

// CreatePayable stores a payable for the payment page and returns it with
// its page's URL: Created the first time, Applied when the same payable
// (kind, reference, amount, account) exists. No intent and no address is
// made: the customer's choice on the page makes the intent (Choose). The
// checks and errors are those of Create, but for the method; the page must
// be on.
func (s *Service) CreatePayable(ctx context.Context, req PayableRequest) (Result[views.PagePayable], error) {
	if s.opt.Pages == nil {
		return Result[views.PagePayable]{}, Fail(InvalidRequest, "a payable's page is the hosted payment page, and the page is off on this paywatch (checkout.enabled)")
	}
	// Create's checks, the method left out: validate checks it last.
	usd, _, err := s.validate(CreateRequest{Store: req.Store, Kind: req.Kind, Reference: req.Reference, Account: req.Account,
		AmountUSD: req.AmountUSD, ReturnURL: req.ReturnURL, Locale: req.Locale})
	if err != nil && KindOf(err) != UnknownMethod {
		return Result[views.PagePayable]{}, err
	}
	now := s.now()
	p, inserted, err := s.store.EnsurePagePayable(ctx, store.Payable{Store: req.Store, Kind: req.Kind, Reference: req.Reference, Account: req.Account,
		AmountCents: int64(usd)}, req.Locale, req.ReturnURL, now)
	if errors.Is(err, store.ErrNotFound) {
		old, err := s.store.PayableByReference(ctx, req.Store, string(req.Kind), req.Reference)
		if err != nil {
			return Result[views.PagePayable]{}, err
		}
		return Result[views.PagePayable]{}, Fail(Conflict, "%s %s already exists with amount_usd %s and account %q; a payable keeps its amount and account",
			old.Kind, old.Reference, payment.Cents(old.AmountCents), old.Account)
	}
	if err != nil {
		return Result[views.PagePayable]{}, err
	}
	out := Applied
	if inserted {
		out = Created
	}
	return Result[views.PagePayable]{Outcome: out, View: s.pagePayableView(p)}, nil
}

func (s *Service) pagePayableView(p store.PagePayable) views.PagePayable {
	v := views.PagePayable{Store: p.Store, Kind: p.Kind, Reference: p.Reference, AmountUSD: payment.Cents(p.AmountCents).String(),
		Status: "unpaid", PaymentPageURL: s.opt.Pages.PayablePageURL(p.ID), ReturnURL: p.ReturnURL, Locale: p.Locale,
		CreatedAt: p.CreatedAt.UTC()}
	if p.Account != "" {
		v.Account = &p.Account
	}
	if p.PaidAt != nil {
		v.Status = "paid"
	}
	return v
}

// PagePayable returns the payable of the page id with its open intents;
// NotFound for a payable not made for the page.
func (s *Service) PagePayable(ctx context.Context, id int64) (PagePayable, error) {
	p, err := s.store.PagePayable(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && p.PageCreatedAt == nil) || s.opt.Pages == nil {
		return PagePayable{}, Fail(NotFound, "no payable page %d", id)
	}
	if err != nil {
		return PagePayable{}, err
	}
	out := PagePayable{ID: p.ID, Payable: s.pagePayableView(p), PaidBy: p.PaidByIntent}
	ins, err := s.store.IntentsByPayable(ctx, p.ID)
	if err != nil {
		return PagePayable{}, err
	}
	now := s.now()
	for _, in := range ins {
		if in.Status == payment.IntentDetected || (in.Status == payment.IntentAwaiting && in.ExpiresAt.After(now)) {
			v, err := s.Get(ctx, in.ID)
			if err != nil {
				return PagePayable{}, err
			}
			out.Open = append(out.Open, v)
		}
	}
	return out, nil
}

// PagePayableOf returns the page payable of an intent's payable (kind,
// reference); NotFound when that payable has no page.
func (s *Service) PagePayableOf(ctx context.Context, shop string, kind payment.PayableKind, reference string) (PagePayable, error) {
	p, err := s.store.PagePayableByReference(ctx, shop, string(kind), reference)
	if errors.Is(err, store.ErrNotFound) || (err == nil && p.PageCreatedAt == nil) {
		return PagePayable{}, Fail(NotFound, "no payable page for %s %s", kind, reference)
	}
	if err != nil {
		return PagePayable{}, err
	}
	return s.PagePayable(ctx, p.ID)
}

// Choose is the customer's choice of method on the payable's page: the
// payable's open intent of that method, else a new intent of it, with
// Create's checks and the open-intents cap. The choice is decided in one
// transaction under the payable's row lock, so the page has at most one
// open intent of its own making at a time, however many tabs choose at
// once: the first choice makes the intent; a later choice of another
// method replaces the open one (superseded, its page linking to the new
// one, renewed_from the old), so the last choice wins, as the customer
// sees it in the tab they look at. An intent on which a payment was
// already seen is never replaced: Conflict, and the customer finishes
// paying it.
func (s *Service) Choose(ctx context.Context, payableID int64, method string) (views.Intent, error) {
	pp, err := s.PagePayable(ctx, payableID)
	if err != nil {
		return views.Intent{}, err
	}
	if pp.PaidBy != "" {
		return s.Get(ctx, pp.PaidBy)
	}
	if pp.Payable.Status == "paid" {
		return views.Intent{}, Fail(AlreadyPaid, "%s %s is already paid", pp.Payable.Kind, pp.Payable.Reference)
	}
	// A double click, or a reload of the choice: the open intent answers,
	// without a transaction (the locked one answers the same way). The
	// intents were read one by one, so one that another choice superseded
	// meanwhile is left to the locked decision.
	var open []views.Intent
	for _, v := range pp.Open {
		if v.SupersededBy == nil && (v.Status == payment.IntentAwaiting || v.Status == payment.IntentDetected) {
			open = append(open, v)
		}
	}
	for _, v := range open {
		if v.Method == method {
			return v, nil
		}
	}
	if n := len(open); n > 0 && seen(open[n-1]) {
		old := open[n-1]
		return views.Intent{}, Fail(Conflict, "a payment was already seen on intent %s (%s): it is paid there, not replaced", old.ID, old.Method)
	}
	// Create's checks, on the payable's own fields and the method.
	_, info, err := s.validate(CreateRequest{Store: pp.Payable.Store, Kind: pp.Payable.Kind, Reference: pp.Payable.Reference, Account: derefStr(pp.Payable.Account),
		AmountUSD: pp.Payable.AmountUSD, Method: method, ReturnURL: pp.Payable.ReturnURL, Locale: pp.Payable.Locale})
	if err != nil {
		return views.Intent{}, err
	}
	if err := s.checkChain(ctx, info.Network); err != nil {
		return views.Intent{}, err
	}
	res, err := whenReplenished(ctx, s, func() (Result[views.Intent], error) { return s.choose(ctx, payableID, info) })
	return res.View, err
}

// seen reports whether a payment was seen on v: any transfer that is not
// orphaned, or an amount received.
func seen(v views.Intent) bool {
	for _, t := range v.Transfers {
		if t.Status != payment.TransferOrphaned {
			return true
		}
	}
	return v.Status != payment.IntentAwaiting || v.ReceivedBaseUnits != "0"
}

// choose decides a choice of info under the payable's row lock, which
// every choice and creation for the payable takes first, so each sees the
// intents the others made: the open intent of the method answers
// (Applied); with none open a new intent is made (Created); else the
// newest open intent is replaced by a new one of info (it renewed_from the
// old, the old superseded by it), after checking again, the payable
// re-decided, that nothing was seen on the old one.
func (s *Service) choose(ctx context.Context, payableID int64, info payment.MethodInfo) (Result[views.Intent], error) {
	return idempotent(ctx, s, nil, func(tx *store.Tx, now time.Time) (Outcome, views.Intent, error) {
		pp, err := tx.PagePayableForUpdate(ctx, payableID)
		if err != nil {
			return 0, views.Intent{}, err
		}
		p := pp.Payable
		if p.PaidByIntent != "" {
			view, err := s.view(ctx, tx, p.PaidByIntent)
			return Applied, view, err
		}
		if p.PaidAt != nil {
			return 0, views.Intent{}, Fail(AlreadyPaid, "%s %s is already paid", p.Kind, p.Reference)
		}
		open, err := tx.OpenIntents(ctx, p.Store, string(p.Kind), p.Reference, now)
		if err != nil {
			return 0, views.Intent{}, err
		}
		if openID, ok := openOf(open, info.Method); ok {
			view, err := s.view(ctx, tx, openID)
			return Applied, view, err
		}
		openCap := s.cfg.Limits.OpenIntentsPerPayable
		if len(open) == 0 { // under any cap
			view, err := s.newIntent(ctx, tx, p, info, "", pp.ReturnURL, pp.Locale, now, nil)
			if err != nil {
				return 0, views.Intent{}, err
			}
			return Created, view, nil
		}
		oldID := open[len(open)-1].ID
		if err := s.reevaluateLocked(ctx, tx, p, oldID, now); err != nil {
			return 0, views.Intent{}, err
		}
		old, err := s.view(ctx, tx, oldID)
		if err != nil {
			return 0, views.Intent{}, err
		}
		if seen(old) || old.SupersededBy != nil || !old.ExpiresAt.After(now) {
			return 0, views.Intent{}, Fail(Conflict, "intent %s is %s: it is not replaced", old.ID, old.Status)
		}
		// The old one leaves the open intents as the new one joins them.
		if openCap > 0 && len(open)-1 >= openCap {
			return 0, views.Intent{}, Fail(TooManyOpenIntents, "%s %s already has %d open intents (%s), as many as one payable may have",
				p.Kind, p.Reference, len(open), openMethods(open))
		}
		view, err := s.newIntent(ctx, tx, p, info, old.ID, pp.ReturnURL, pp.Locale, now, nil)
		if err != nil {
			return 0, views.Intent{}, err
		}
		if err := tx.Supersede(ctx, old.ID, view.ID, now); err != nil {
			return 0, views.Intent{}, err
		}
		if err := s.reevaluateLocked(ctx, tx, p, old.ID, now); err != nil {
			return 0, views.Intent{}, err
		}
		return Created, view, nil
	})
}

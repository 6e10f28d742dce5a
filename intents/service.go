package intents

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paywatch/paywatch/addresses"
	"github.com/paywatch/paywatch/clock"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/logs"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/rates"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// Quoter answers the current quote of a symbol.
type Quoter interface {
	Quote(symbol string, now time.Time) (rates.Quote, error)
}

// ChainStatus tells whether new intents may be accepted on a network: nil
// when its scanner is healthy and close to the node, else why not.
type ChainStatus interface {
	Available(ctx context.Context, network payment.Network) error
}

// Watcher receives keys handed out by this instance after commit, so the
// local scanner watches them at once.
type Watcher interface {
	Watch(network payment.Network, keys ...[]byte)
}

// AddressSource derives the addresses of one network.
type AddressSource struct {
	// Deriver derives index i; nil for pool networks (Solana).
	Deriver addresses.Deriver
	// Source identifies the account key (its fingerprint), so each key has
	// its own index counter.
	Source string
	// Gap is how many free addresses are kept derived and watched ahead of
	// the ones handed out.
	Gap int
	// Store is the store whose key it is ("": the default store).
	Store string
}

// Pages links intents to their hosted payment page (package checkout).
type Pages interface {
	// PageURL returns the page URL of an intent id.
	PageURL(intentID string) string
	// CheckReturnURL returns why a storefront's return_url cannot be
	// offered on the page of an intent of shop (not http(s), or a host
	// that is not allowed: the store's return hosts, else the page's), or
	// nil.
	CheckReturnURL(shop, raw string) error
	// CheckLocale returns why a storefront's locale is not a language of
	// the page that shop offers, or nil.
	CheckLocale(shop, tag string) error
	// PayablePageURL returns the page URL of a payable made for the page.
	PayablePageURL(payableID int64) string
}

// Options wires a Service.
type Options struct {
	Store     *store.Store
	Config    *config.Config
	Quotes    Quoter
	Addresses map[payment.Network]AddressSource
	// Stores are the stores other than the default one, by id (issue 34).
	// Their creations take no pre-derived address: each derives its own,
	// in its transaction, from the store's key.
	Stores  map[string]StoreSetup
	Chains  ChainStatus
	Watcher Watcher
	// Clock is the clock of decisions and of the deadline sweeps; nil is
	// the wall clock.
	Clock clock.Clock
	Log   *slog.Logger
	// Pages gives views their payment_page_url; nil when the hosted page is
	// off (then a return_url or a locale is refused).
	Pages Pages
}

// Service is the payment core.
type Service struct {
	store *store.Store
	cfg   *config.Config
	opt   Options
	now   func() time.Time
	log   *slog.Logger
	topup map[payment.Cents]bool

	// replenish wakes each derived network's replenisher (Run).
	wake map[payment.Network]chan struct{}
	// running is set while Run's replenishers run.
	running atomic.Bool
	mu      sync.Mutex
	// next is the round each network's replenisher runs next: requests
	// that found no free address wait on it, and it derives for as many
	// as are waiting when it starts.
	next map[payment.Network]*replenishRound
	// waiting counts the requests waiting for a free address per network.
	waiting map[payment.Network]int
	// creations are each network's batches of creations (createBatched).
	creations map[payment.Network]*creationQueue
	// lowSeen is, per network, the highest derivation counter that a
	// creation saw when it reported its address low (reportLow), since the
	// network's last round began; toppedTo is the counter after this
	// service's last round. A report that saw less than toppedTo was made
	// before that round's top-up, which already answered it. vacuumedTo is
	// toppedTo when this service last vacuumed the free-address queue: the
	// rounds since derived as many addresses as were claimed.
	lowSeen, toppedTo, vacuumedTo map[payment.Network]int64
	// storeSetups is Options.Stores as SetStores last replaced it.
	storeSetups atomic.Pointer[map[string]StoreSetup]
}

// New returns a Service.
func New(opt Options) *Service {
	opt.Clock = clock.Or(opt.Clock)
	opt.Log = logs.Or(opt.Log)
	s := &Service{store: opt.Store, cfg: opt.Config, opt: opt, now: clock.Stored(opt.Clock.Now), log: opt.Log.With("component", "intents"), topup: map[payment.Cents]bool{},
		wake: map[payment.Network]chan struct{}{},
		next: map[payment.Network]*replenishRound{}, waiting: map[payment.Network]int{},
		creations: map[payment.Network]*creationQueue{},
		lowSeen:   map[payment.Network]int64{}, toppedTo: map[payment.Network]int64{}, vacuumedTo: map[payment.Network]int64{}}
	for n, a := range opt.Addresses {
		if a.Deriver != nil && a.Gap > 0 {
			s.wake[n] = make(chan struct{}, 1)
		}
	}
	for _, c := range opt.Config.Topups() {
		s.topup[c] = true
	}
	return s
}

// Create creates payment instructions for a payable: the new intent
// (Created). With idem, a repeated request returns the first result before
// any check (see replay), and a different request under the same key fails.
func (s *Service) Create(ctx context.Context, req CreateRequest, idem *Idem) (Result[views.Intent], error) {
	if res, done, err := replay[views.Intent](ctx, s, idem); done || err != nil {
		return res, err
	}
	usd, info, err := s.validate(req)
	if err != nil {
		return Result[views.Intent]{}, err
	}
	if err := s.checkChain(ctx, info.Network); err != nil {
		return Result[views.Intent]{}, err
	}
	if store.StoreOr(req.Store) == store.DefaultStore && s.batched(info) {
		return s.createBatched(ctx, req, idem, usd, info)
	}
	return whenReplenished(ctx, s, func() (Result[views.Intent], error) { return s.create(ctx, req, idem, usd, info) })
}

// create is one attempt of Create after its checks. A payable that
// already has an open intent of the method gets that intent back
// (Applied: no new address is taken), and one with as many open intents as
// limits.open_intents_per_payable allows is refused: a reloading or
// scripted checkout cannot drain the addresses. The payable's row lock,
// taken first, makes concurrent creations for one payable see each
// other's intents.
func (s *Service) create(ctx context.Context, req CreateRequest, idem *Idem, usd payment.Cents, info payment.MethodInfo) (Result[views.Intent], error) {
	openCap := s.cfg.Limits.OpenIntentsPerPayable
	return idempotent(ctx, s, idem, func(tx *store.Tx, now time.Time) (Outcome, views.Intent, error) {
		want := store.Payable{Store: req.Store, Kind: req.Kind, Reference: req.Reference, Account: req.Account, AmountCents: int64(usd), CreatedAt: now}
		var p store.Payable
		var open []store.OpenIntent
		var err error
		var taken *takenAddress
		if src, ok := s.sourceFor(req.Store, info.Network); ok && src.Deriver != nil {
			// One round trip: the address taken is freed by the rollback
			// when the payable is refused below; none is taken when the
			// payable's open intents answer instead.
			id := store.NewID("pi")
			var a *store.Address
			p, a, open, err = tx.EnsurePayableTakeDerived(ctx, want, string(info.Network), src.Source, string(info.Method), id, now, openCap)
			taken = &takenAddress{id: id, addr: a}
		} else {
			p, err = tx.EnsurePayable(ctx, want)
			if err == nil {
				open, err = tx.OpenIntents(ctx, p.Store, string(p.Kind), p.Reference, now)
			}
		}
		if err != nil {
			return 0, views.Intent{}, err
		}
		if p.AmountCents != int64(usd) || p.Account != req.Account {
			return 0, views.Intent{}, Fail(Conflict, "%s %s already exists with amount_usd %s and account %q; a payable keeps its amount and account",
				p.Kind, p.Reference, payment.Cents(p.AmountCents), p.Account)
		}
		if p.PaidAt != nil {
			return 0, views.Intent{}, Fail(AlreadyPaid, "%s %s is already paid", p.Kind, p.Reference)
		}
		if id, ok := openOf(open, info.Method); ok {
			view, err := s.view(ctx, tx, id)
			return Applied, view, err
		}
		if openCap > 0 && len(open) >= openCap {
			return 0, views.Intent{}, Fail(TooManyOpenIntents, "%s %s already has %d open intents (%s), as many as one payable may have: pay one of them, or create again after one expires",
				p.Kind, p.Reference, len(open), openMethods(open))
		}
		view, err := s.newIntent(ctx, tx, p, info, "", req.ReturnURL, req.Locale, now, taken)
		if err != nil {
			return 0, views.Intent{}, err
		}
		return Created, view, nil
	})
}

// openOf is the id of the oldest of open with method m.
func openOf(open []store.OpenIntent, m payment.Method) (string, bool) {
	for _, o := range open {
		if o.Method == string(m) {
			return o.ID, true
		}
	}
	return "", false
}

// openMethods names the methods of open, for an error message.
func openMethods(open []store.OpenIntent) string {
	names := make([]string, len(open))
	for i, o := range open {
		names[i] = o.Method
	}
	return strings.Join(names, ", ")
}

// takenAddress is a pre-derived address already taken for intent id (addr
// nil when none was free).
type takenAddress struct {
	id   string
	addr *store.Address
}

// checkChain refuses new intents on a network that is down or lagging.
func (s *Service) checkChain(ctx context.Context, n payment.Network) error {
	if s.opt.Chains == nil {
		return nil
	}
	if err := s.opt.Chains.Available(ctx, n); err != nil {
		return Fail(ChainUnavailable, "%s payments are not accepted right now: %v", n, err)
	}
	return nil
}

// newIntent quotes, allocates an address and stores an intent for p.
// The caller checks the chain (checkChain) before its transaction: the check
// reads the database, and a transaction must not wait for a second connection.
// With taken, the intent gets taken's id and address (see allocate).
// The intent and its event are queued, so they reach the database with the
// transaction's next statement or its commit.
func (s *Service) newIntent(ctx context.Context, tx *store.Tx, p store.Payable, info payment.MethodInfo, renewedFrom, returnURL, locale string, now time.Time, taken *takenAddress) (views.Intent, error) {
	in, err := s.intentFor(p, info, renewedFrom, returnURL, locale, now)
	if err != nil {
		return views.Intent{}, err
	}
	if taken != nil {
		in.ID = taken.id
	}
	keys, err := s.allocate(ctx, tx, &in, now, taken)
	if err != nil {
		return views.Intent{}, err
	}
	tx.QueueInsertIntent(in)
	// No NOTIFY for the address: pre-derived and pool keys were announced to
	// the scanners when they were added.
	view := s.viewOf(in, nil, 0)
	if err := tx.QueueAppendEvent(payment.EventIntentCreated, in.ID, "", in.Account, view, now); err != nil {
		return views.Intent{}, err
	}
	if s.opt.Watcher != nil {
		tx.AfterCommit(func() { s.opt.Watcher.Watch(info.Network, keys...) })
	}
	return view, nil
}

// intentFor is the intent a creation stores for p, quoted now, with no
// address yet.
func (s *Service) intentFor(p store.Payable, info payment.MethodInfo, renewedFrom, returnURL, locale string, now time.Time) (store.Intent, error) {
	q, err := s.opt.Quotes.Quote(info.Symbol, now)
	if err != nil {
		return store.Intent{}, Fail(RateUnavailable, "%v", err)
	}
	mc := s.cfg.Methods[info.Method]
	amount := rates.AmountFor(payment.Cents(p.AmountCents), q.USDPerUnit, info.Decimals, *mc.DisplayDecimals)
	tol := s.storeTolerance(p.Store, amount, mc.Tolerance())
	if tol.Cmp(amount) >= 0 {
		tol = new(big.Int).Sub(amount, big.NewInt(1))
	}
	dust := mc.Dust()
	if amount.Cmp(dust) < 0 {
		min := rates.MinimumUSD(dust, q.USDPerUnit, info.Decimals, *mc.DisplayDecimals)
		return store.Intent{}, Invalid("amount_usd", InvalidAmount, "%s USD is %s %s at %s USD per %s, below the %s dust minimum of %s %s, so it could never be paid: the smallest %s amount is %s USD at this rate",
			payment.Cents(p.AmountCents), payment.TrimUnits(amount, info.Decimals), info.Symbol, q.Decimal(), info.Symbol,
			info.Method, payment.TrimUnits(dust, info.Decimals), info.Symbol, info.Method, min)
	}
	in := store.Intent{
		ID: store.NewID("pi"), PayableID: p.ID, Store: p.Store, Kind: p.Kind, Reference: p.Reference, Account: p.Account,
		AmountCents: p.AmountCents, Method: string(info.Method), Network: string(info.Network), Asset: string(info.Asset),
		Amount: amount, Tolerance: tol, DustMin: dust, Rate: q.Decimal(), RateSources: q.Sources, RateAt: q.At.UTC().Truncate(time.Microsecond), // as stored
		ExpiresAt: now.Add(s.cfg.Deadline.Duration), Status: payment.IntentAwaiting,
		ConfirmationsRequired: s.storeConfirmations(p.Store, info.Method, s.cfg.MethodConfirmations(info.Method, payment.Cents(p.AmountCents))),
		RenewedFrom:           renewedFrom, CreatedAt: now, UpdatedAt: now,
		Received: new(big.Int), ConfirmedSum: new(big.Int), ReturnURL: returnURL, Locale: locale,
	}
	return in, nil
}

// allocate hands a fresh address to in: the lowest free pre-derived address
// of the network (concurrent creations skip each other's rows instead of
// queueing on a counter), or the oldest free pool key (Solana). With taken
// (from EnsurePayableTakeDerived), the pre-derived address was already
// taken. Addresses are derived off the request path, by the replenisher:
// when none is free (a burst outran it), allocate fails with drainedError
// and the request waits for the replenisher (whenReplenished). Only with a
// gap of 0 (nothing kept ahead, by configuration) does a creation derive
// its own address.
func (s *Service) allocate(ctx context.Context, tx *store.Tx, in *store.Intent, now time.Time, taken *takenAddress) ([][]byte, error) {
	network := payment.Network(in.Network)
	src, ok := s.sourceFor(in.Store, network)
	if !ok {
		if store.StoreOr(in.Store) != store.DefaultStore {
			return nil, Fail(ChainUnavailable, "this store has no extended public key for %s: an operator adds one with `paywatch stores add-key`", in.Network)
		}
		return nil, Fail(ChainUnavailable, "no addresses are configured for %s", in.Network)
	}
	if src.Deriver == nil {
		a, err := tx.TakePoolAddress(ctx, in.Network, store.PoolLane(in.Store), in.ID)
		if errors.Is(err, store.ErrNotFound) && store.StoreOr(in.Store) != store.DefaultStore {
			return nil, Fail(AddressPoolEmpty, "this store's %s address pool is empty: an operator must import keys with `paywatch pool import --network %s --store %s FILE`",
				in.Network, in.Network, in.Store)
		}
		if errors.Is(err, store.ErrNotFound) {
			return nil, Fail(AddressPoolEmpty, "the %s address pool is empty: an operator must import keys with `paywatch pool import --network %s FILE`", in.Network, in.Network)
		}
		if err != nil {
			return nil, err
		}
		in.Address, in.AddressKey = a.Address, a.Key
		return [][]byte{a.Key}, nil
	}
	var a store.Address
	var err error
	switch {
	case taken == nil:
		a, err = tx.TakeDerivedAddress(ctx, in.Network, src.Source, in.ID)
	case taken.addr == nil:
		err = store.ErrNotFound
	default:
		a = *taken.addr
	}
	if err == nil {
		if a.Ahead < src.low() {
			tx.AfterCommit(func() { s.reportLow(network, a) })
		}
		in.Address, in.AddressKey = a.Address, a.Key
		return [][]byte{a.Key}, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if src.Gap > 0 && store.StoreOr(in.Store) == store.DefaultStore {
		return nil, drainedError{network}
	}
	rows, err := s.deriveRange(ctx, tx, network, src, 1, now)
	if err != nil {
		return nil, err
	}
	if err := tx.AssignAddress(ctx, rows[0]); err != nil {
		return nil, fmt.Errorf("assign %s index %d: %w", in.Network, rows[0].Index, err)
	}
	in.Address, in.AddressKey = rows[0].Address, rows[0].Key
	return [][]byte{rows[0].Key}, nil
}

// Get returns an intent with its transfers.
func (s *Service) Get(ctx context.Context, id string) (views.Intent, error) {
	v, err := s.view(ctx, s.store, id)
	if errors.Is(err, store.ErrNotFound) {
		return views.Intent{}, Fail(NotFound, "no intent %q", id)
	}
	return v, err
}

// Report records that the customer says they have paid. It changes no
// status and is idempotent (the first time is kept).
func (s *Service) Report(ctx context.Context, id string) (views.Intent, error) {
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		now := s.now().UTC()
		set, err := tx.SetReported(ctx, id, now)
		if err != nil {
			return err
		}
		if !set {
			if _, err := tx.GetIntent(ctx, id); errors.Is(err, store.ErrNotFound) {
				return Fail(NotFound, "no intent %q", id)
			} else if err != nil {
				return err
			}
			return nil
		}
		view, err := s.view(ctx, tx, id)
		if err != nil {
			return err
		}
		err = tx.QueueAppendEvent(payment.EventIntentReported, id, "", derefStr(view.Account), view, now)
		return err
	})
	if err != nil {
		return views.Intent{}, err
	}
	return s.Get(ctx, id)
}

func derefStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// intentReader reads an intent and what its view needs; *store.Store
// (outside a transaction) and *store.Tx (inside one) both are.
type intentReader interface {
	GetIntent(ctx context.Context, id string) (store.Intent, error)
	TransfersByIntent(ctx context.Context, intentID string) ([]store.Transfer, error)
	NodeHeight(ctx context.Context, network string) (int64, error)
}

// viewReader reads an intent, its transfers and its network's node height
// in one round trip (*store.Store and *store.Tx).
type viewReader interface {
	IntentView(ctx context.Context, id string) (store.Intent, []store.Transfer, int64, error)
}

// view renders an intent with its transfers read through r.
func (s *Service) view(ctx context.Context, r intentReader, id string) (views.Intent, error) {
	if vr, ok := r.(viewReader); ok {
		in, trs, tip, err := vr.IntentView(ctx, id)
		if err != nil {
			return views.Intent{}, err
		}
		return s.viewOf(in, trs, tip), nil
	}
	in, err := r.GetIntent(ctx, id)
	if err != nil {
		return views.Intent{}, err
	}
	trs, err := r.TransfersByIntent(ctx, id)
	if err != nil {
		return views.Intent{}, err
	}
	tip, err := r.NodeHeight(ctx, in.Network)
	if err != nil {
		return views.Intent{}, err
	}
	return s.viewOf(in, trs, tip), nil
}

// viewOf renders an intent as views.IntentOf does, with its payment page.
func (s *Service) viewOf(in store.Intent, trs []store.Transfer, tip int64) views.Intent {
	v := views.IntentOf(in, trs, tip, s.PaymentURI(in))
	if s.opt.Pages != nil {
		v.PaymentPageURL = s.opt.Pages.PageURL(in.ID)
	}
	return v
}

// Renew creates a new intent (Created) for the same payable and method at
// the current rate and supersedes the old one (whose address stays watched). Only an
// intent whose deadline passed unpaid (expired, underpaid, or awaiting past
// its deadline) can be renewed. As a creation, a payable that has an open
// intent of the method gets that one back (Applied; the old intent is left
// as it is), and one with limits.open_intents_per_payable open intents is
// refused. With idem, a repeated request returns the first response before
// any check (see replay).
func (s *Service) Renew(ctx context.Context, id string, idem *Idem) (Result[views.Intent], error) {
	if res, done, err := replay[views.Intent](ctx, s, idem); done || err != nil {
		return res, err
	}
	if in, err := s.store.GetIntent(ctx, id); err == nil {
		if err := s.checkChain(ctx, payment.Network(in.Network)); err != nil {
			return Result[views.Intent]{}, err
		}
	}
	return whenReplenished(ctx, s, func() (Result[views.Intent], error) { return s.renew(ctx, id, idem) })
}

// renew is one attempt of Renew after its checks.
func (s *Service) renew(ctx context.Context, id string, idem *Idem) (Result[views.Intent], error) {
	return idempotent(ctx, s, idem, func(tx *store.Tx, now time.Time) (Outcome, views.Intent, error) {
		old, err := tx.GetIntent(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return 0, views.Intent{}, Fail(NotFound, "no intent %q", id)
		}
		if err != nil {
			return 0, views.Intent{}, err
		}
		p, err := tx.PayableForUpdate(ctx, old.PayableID)
		if err != nil {
			return 0, views.Intent{}, err
		}
		if p.PaidAt != nil {
			return 0, views.Intent{}, Fail(AlreadyPaid, "%s %s is already paid", p.Kind, p.Reference)
		}
		if err := s.reevaluateLocked(ctx, tx, p, id, now); err != nil {
			return 0, views.Intent{}, err
		}
		old, err = tx.GetIntent(ctx, id)
		if err != nil {
			return 0, views.Intent{}, err
		}
		switch {
		case old.SupersededBy != "":
			return 0, views.Intent{}, Fail(Conflict, "intent %s was already renewed as %s", id, old.SupersededBy)
		case old.Status == payment.IntentExpired, old.Status == payment.IntentUnderpaid:
		default:
			return 0, views.Intent{}, Fail(Conflict, "intent %s is %s until %s; only an expired or underpaid intent can be renewed",
				id, old.Status, old.ExpiresAt.UTC().Format(time.RFC3339))
		}
		info, err := s.methodFor(old.Method)
		if err != nil {
			return 0, views.Intent{}, err
		}
		// As a creation: the payable's open intent of the method answers
		// (the old one stays as it is), and the cap holds.
		open, err := tx.OpenIntents(ctx, p.Store, string(p.Kind), p.Reference, now)
		if err != nil {
			return 0, views.Intent{}, err
		}
		if openID, ok := openOf(open, info.Method); ok {
			view, err := s.view(ctx, tx, openID)
			return Applied, view, err
		}
		if openCap := s.cfg.Limits.OpenIntentsPerPayable; openCap > 0 && len(open) >= openCap {
			return 0, views.Intent{}, Fail(TooManyOpenIntents, "%s %s already has %d open intents (%s), as many as one payable may have: pay one of them, or renew after one expires",
				p.Kind, p.Reference, len(open), openMethods(open))
		}
		view, err := s.newIntent(ctx, tx, p, info, old.ID, old.ReturnURL, old.Locale, now, nil)
		if err != nil {
			return 0, views.Intent{}, err
		}
		if err := tx.Supersede(ctx, old.ID, view.ID, now); err != nil {
			return 0, views.Intent{}, err
		}
		// Renewed, it is superseded and its transfers are late (matcher rule
		// 6): decided again now, with its intent.superseded event, what is
		// stored is what any later decision or rescan says.
		if err := s.reevaluateLocked(ctx, tx, p, old.ID, now); err != nil {
			return 0, views.Intent{}, err
		}
		return Created, view, nil
	})
}

// MinimumUSD returns the smallest USD amount a method accepts at quote q
// (smaller amounts are refused: their crypto amount is below the method's
// dust minimum) and that dust minimum in base units, for /v1/methods.
func (s *Service) MinimumUSD(info payment.MethodInfo, q rates.Quote) (payment.Cents, *big.Int) {
	mc := s.cfg.Methods[info.Method]
	dust := mc.Dust()
	return rates.MinimumUSD(dust, q.USDPerUnit, info.Decimals, *mc.DisplayDecimals), dust
}

// Quote returns the current quote of a symbol, for /v1/methods.
func (s *Service) Quote(symbol string, now time.Time) (rates.Quote, error) {
	return s.opt.Quotes.Quote(symbol, now)
}

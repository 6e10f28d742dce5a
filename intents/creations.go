package intents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// Concurrent creations on a network that keeps pre-derived addresses are
// batched: the creations that arrive while a network's batches are in
// flight wait, and the next batch takes them all, in one transaction of a
// few statements (store.BeginCreations). A batch waits for nothing but the
// batch before it, so a lone creation runs at once, alone, and under load
// the database does the per-transaction and per-statement work once for
// many creations.
//
// A batch commits only when every creation in it goes the plain way: its
// Idempotency-Key is new, its payable is new or unpaid with the same
// amount and account, it is quoted above the dust minimum, and there is a
// free address for it. Otherwise the batch rolls back, the creations that
// do not go the plain way run alone (create), which answers exactly as
// without batching, and the others run again as a batch: a committed
// batch is the same writes as its creations run one after another.

const (
	// creationBatches is how many batches of one network run at once: one
	// in the database while the next one's requests gather.
	creationBatches = 2
	// creationBatchMax bounds a batch's size: the most intents one
	// statement hands addresses to.
	creationBatchMax = store.MaxTaken
	// creationBatchTimeout bounds a batch's transaction, which runs on even
	// when the request that runs it goes away.
	creationBatchTimeout = 30 * time.Second
)

// creation is one request's part of a batch.
type creation struct {
	req  CreateRequest
	idem *Idem
	usd  payment.Cents
	info payment.MethodInfo

	// lead hands the request a batch to run (one that holds it).
	lead chan []*creation
	// done is closed when the request's batch ended: with res, or with
	// res unset (no Outcome) when the request must run on its own.
	done chan struct{}
	res  Result[views.Intent]
}

// creationQueue is one network's waiting creations and running batches.
type creationQueue struct {
	waiting []*creation
	running int
}

// batched reports whether creations of info's network are batched: those
// that take pre-derived addresses kept ahead by the replenisher.
func (s *Service) batched(info payment.MethodInfo) bool {
	src, ok := s.opt.Addresses[info.Network]
	return ok && src.Deriver != nil && src.Gap > 0
}

// createBatched is create, in a batch with the creations on the same
// network that arrive meanwhile.
func (s *Service) createBatched(ctx context.Context, req CreateRequest, idem *Idem, usd payment.Cents, info payment.MethodInfo) (Result[views.Intent], error) {
	c := &creation{req: req, idem: idem, usd: usd, info: info, lead: make(chan []*creation, 1), done: make(chan struct{})}
	if b := s.enqueue(c); b != nil {
		s.runBatch(ctx, info.Network, b)
	}
	cancelled := ctx.Done()
	for {
		select {
		case b := <-c.lead:
			s.runBatch(ctx, info.Network, b)
		case <-c.done:
			if c.res.Outcome == 0 { // the batch did not create it
				return whenReplenished(ctx, s, func() (Result[views.Intent], error) { return s.create(ctx, req, idem, usd, info) })
			}
			return c.res, nil
		case <-cancelled:
			if s.withdraw(c) {
				return Result[views.Intent]{}, ctx.Err()
			}
			// A batch holds it already: it ends soon, and its answer is
			// recorded under the Idempotency-Key a retry would replay.
			cancelled = nil
		}
	}
}

// enqueue adds c to its network's waiting creations and returns a batch
// for the caller to run when fewer than creationBatches run.
func (s *Service) enqueue(c *creation) []*creation {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.creations[c.info.Network]
	if q == nil {
		q = &creationQueue{}
		s.creations[c.info.Network] = q
	}
	q.waiting = append(q.waiting, c)
	if q.running >= creationBatches {
		return nil
	}
	q.running++
	return q.take()
}

// take removes the next batch from the waiting creations.
func (q *creationQueue) take() []*creation {
	n := min(len(q.waiting), creationBatchMax)
	b := q.waiting[:n:n]
	q.waiting = q.waiting[n:]
	return b
}

// withdraw removes c from the waiting creations, unless a batch took it.
func (s *Service) withdraw(c *creation) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.creations[c.info.Network]
	for i, w := range q.waiting {
		if w == c {
			q.waiting = append(q.waiting[:i:i], q.waiting[i+1:]...)
			return true
		}
	}
	return false
}

// runBatch runs batch b, ends each of its creations, and hands the next
// batch, if creations wait, to the first of them.
func (s *Service) runBatch(ctx context.Context, network payment.Network, b []*creation) {
	defer s.endBatch(network, b)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), creationBatchTimeout)
	defer cancel()
	in := distinct(b)
	for len(in) > 0 {
		var res []Result[views.Intent]
		err := s.store.InTx(ctx, func(tx *store.Tx) error {
			var err error
			res, err = s.createAll(ctx, tx, network, in)
			return err
		})
		var a aloneError
		if !errors.As(err, &a) {
			if err == nil {
				for i, c := range in {
					c.res = res[i]
				}
			}
			return
		}
		// Rolled back: those run alone, the others again as a batch.
		rest := in[:0:0]
		for i, c := range in {
			if !a.which[i] {
				rest = append(rest, c)
			}
		}
		in = rest
	}
}

// endBatch ends the creations of batch b: each that the batch did not
// create (it repeated another, did not go the plain way, the batch failed,
// or it panicked) runs alone. Then the next batch, if creations wait, goes
// to the first of them.
func (s *Service) endBatch(network payment.Network, b []*creation) {
	s.mu.Lock()
	q := s.creations[network]
	var next []*creation
	if len(q.waiting) > 0 {
		next = q.take()
	} else {
		q.running--
	}
	s.mu.Unlock()
	for _, c := range b {
		close(c.done)
	}
	if next != nil {
		next[0].lead <- next
	}
}

// distinct is the creations of b one transaction can hold: those that do
// not repeat an earlier one's payable or Idempotency-Key (a repeat runs
// alone, after the batch).
func distinct(b []*creation) (in []*creation) {
	refs := make(map[[2]string]bool, len(b))
	keys := make(map[[2]string]bool, len(b))
	for _, c := range b {
		ref := [2]string{string(c.req.Kind), c.req.Reference}
		var key [2]string
		if c.idem != nil {
			key = [2]string{c.idem.KeyID, c.idem.Key}
		}
		if refs[ref] || (c.idem != nil && keys[key]) {
			continue
		}
		refs[ref] = true
		if c.idem != nil {
			keys[key] = true
		}
		in = append(in, c)
	}
	return in
}

// aloneError rolls a batch back: the creations of the batch it marks
// must run alone.
type aloneError struct{ which map[int]bool }

func (e aloneError) Error() string {
	return fmt.Sprintf("%d creations of the batch do not go the plain way", len(e.which))
}

// createAll creates the intents of batch b on network in tx, as create
// would one after another, or fails with an aloneError naming those that
// would not simply create an intent.
func (s *Service) createAll(ctx context.Context, tx *store.Tx, network payment.Network, b []*creation) ([]Result[views.Intent], error) {
	now := s.now().UTC()
	src := s.opt.Addresses[network]
	c := creationsOf(b, network, src.Source, now)
	got, err := tx.BeginCreations(ctx, c)
	if err != nil {
		return nil, err
	}
	ins, err := s.intentsOf(b, c.IntentIDs, got, now)
	if err != nil {
		return nil, err
	}
	res, err := s.queueCreated(tx, b, ins, now)
	if err != nil {
		return nil, err
	}
	keys := make([][]byte, len(ins))
	var low *store.Address // the taken address with the fewest derived ahead, if too few
	for i, in := range ins {
		keys[i] = in.AddressKey
		if a := &got.Taken[i]; a.Ahead < src.low() && (low == nil || a.Index+a.Ahead > low.Index+low.Ahead) {
			low = a
		}
	}
	if s.opt.Watcher != nil {
		tx.AfterCommit(func() { s.opt.Watcher.Watch(network, keys...) })
	}
	if low != nil {
		a := *low
		tx.AfterCommit(func() { s.reportLow(network, a) })
	}
	return res, nil
}

// creationsOf is what BeginCreations claims, ensures and takes for b.
func creationsOf(b []*creation, network payment.Network, source string, now time.Time) store.Creations {
	c := store.Creations{Network: string(network), Source: source, Now: now}
	for _, j := range b {
		if j.idem != nil {
			c.Claims = append(c.Claims, store.IdempotencyClaim{APIKeyID: j.idem.KeyID, Key: j.idem.Key, Hash: j.idem.Hash})
		}
		c.Payables = append(c.Payables, store.Payable{Store: j.req.Store, Kind: j.req.Kind, Reference: j.req.Reference, Account: j.req.Account,
			AmountCents: int64(j.usd), CreatedAt: now})
		c.IntentIDs = append(c.IntentIDs, store.NewID("pi"))
	}
	return c
}

// intentsOf is the intent of each creation of b, with the id and address
// BeginCreations gave it, or an aloneError naming the creations that do
// not go the plain way: a key already used, a payable with an open intent,
// a payable stored with another amount or account or already paid, an amount below the dust minimum (or
// no rate), no free address.
func (s *Service) intentsOf(b []*creation, ids []string, got store.CreationsBegun, now time.Time) ([]store.Intent, error) {
	alone := aloneError{which: map[int]bool{}}
	claim := 0
	ins := make([]store.Intent, len(b))
	for i, j := range b {
		if j.idem != nil {
			if !got.Claimed[claim] {
				alone.which[i] = true
			}
			claim++
		}
		if got.Open[i] { // it answers its open intent or counts them, alone
			alone.which[i] = true
			continue
		}
		p := got.Payables[i]
		if p.AmountCents != int64(j.usd) || p.Account != j.req.Account || p.PaidAt != nil {
			alone.which[i] = true
			continue
		}
		in, err := s.intentFor(p, j.info, "", j.req.ReturnURL, j.req.Locale, now)
		if err != nil {
			alone.which[i] = true
			continue
		}
		if i >= len(got.Taken) {
			alone.which[i] = true // it waits for the replenisher
			continue
		}
		a := got.Taken[i]
		in.ID, in.Address, in.AddressKey = ids[i], a.Address, a.Key
		ins[i] = in
	}
	if len(alone.which) > 0 {
		return nil, alone
	}
	return ins, nil
}

// queueCreated queues the intents of b, the answers stored under their
// Idempotency-Keys, and their intent.created events, and returns the
// answers.
func (s *Service) queueCreated(tx *store.Tx, b []*creation, ins []store.Intent, now time.Time) ([]Result[views.Intent], error) {
	tx.QueueInsertIntents(ins)
	res := make([]Result[views.Intent], len(b))
	evs := make([]store.NewEvent, len(b))
	var saved []store.SavedResponse
	for i, in := range ins {
		// Encoded once: the event, the stored answer and the answer are
		// the same bytes.
		view := s.viewOf(in, nil, 0)
		body, err := json.Marshal(view)
		if err != nil {
			return nil, err
		}
		res[i] = Result[views.Intent]{Outcome: Created, View: view, Body: body}
		evs[i] = store.NewEvent{IntentID: in.ID, Account: in.Account, Data: view, JSON: body}
		if j := b[i]; j.idem != nil {
			saved = append(saved, store.SavedResponse{APIKeyID: j.idem.KeyID, Key: j.idem.Key, Status: int(Created), Body: body})
		}
	}
	if len(saved) > 0 {
		tx.QueueSaveIdempotentResponses(saved)
	}
	if err := tx.QueueAppendEvents(payment.EventIntentCreated, evs, now); err != nil {
		return nil, err
	}
	return res, nil
}

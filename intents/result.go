package intents

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/paywatch/paywatch/store"
)

// Outcome says what a command did. It is stored with an Idempotency-Key's
// response (0 while the key's first request runs), so its values are fixed.
type Outcome int

// The outcomes of a command.
const (
	// Created: the command made something new (an intent, a debit entry).
	Created Outcome = 1
	// Applied: the command's effect holds and nothing new was made (a
	// finance decision recorded on a transfer; a debit that an earlier
	// request for the same order already made).
	Applied Outcome = 2
)

// Result is what a command run under an optional Idempotency-Key answers.
type Result[V any] struct {
	Outcome Outcome
	// View is what the command made or found; zero when Replayed.
	View V
	// Stored is, for a request whose Idempotency-Key had already completed,
	// the view as first answered, exactly as it was stored (JSON); an
	// answer built from it must be these bytes. Nil otherwise.
	Stored []byte
	// Body, when set, is View as JSON (json.Marshal of it), encoded once
	// for what the command stored: an answer may write these bytes.
	Body []byte
}

// Replayed reports whether r is the stored answer of an earlier request
// with the same Idempotency-Key.
func (r Result[V]) Replayed() bool { return r.Stored != nil }

// Replay answers a request whose Idempotency-Key already completed: its
// stored result (done true), or idempotency_mismatch for another request
// under the key. It runs before any validation or availability check, so a
// storefront retrying a create whose response it lost gets that response
// even while the chain or the rate is down, and never creates a second
// intent believing the first one failed. A key never used, or whose first
// request is still running, is left to Idempotent (done false).
func Replay[V any](ctx context.Context, st *store.Store, idem *Idem) (res Result[V], done bool, err error) {
	if idem == nil {
		return res, false, nil
	}
	prev, err := st.IdempotentResponse(ctx, idem.KeyID, idem.Key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return res, false, nil
	case err != nil:
		return res, false, err
	case string(prev.RequestHash) != string(idem.Hash):
		return res, false, mismatch(idem)
	case prev.Status == 0:
		return res, false, nil
	}
	return stored[V](prev), true, nil
}

// stored is the result recorded for a completed Idempotency-Key.
func stored[V any](prev store.IdempotentResponse) Result[V] {
	body := prev.Body
	if body == nil {
		body = []byte{}
	}
	return Result[V]{Outcome: Outcome(prev.Status), Stored: body}
}

func mismatch(idem *Idem) error {
	return Fail(IdempotencyMismatch, "Idempotency-Key %q was used with another request; use a new key for a new request", idem.Key)
}

// Idempotent runs fn in a transaction of st, claiming idem first when
// given, and stores fn's result with the key in the same transaction. fn
// gets the time of its attempt (clock, in UTC): a retried transaction reads
// it again.
func Idempotent[V any](ctx context.Context, st *store.Store, clock func() time.Time, idem *Idem, fn func(*store.Tx, time.Time) (Outcome, V, error)) (Result[V], error) {
	var res Result[V]
	err := st.InTx(ctx, func(tx *store.Tx) error {
		now := clock().UTC()
		if idem != nil {
			prev, claimed, err := tx.ClaimIdempotencyKey(ctx, idem.KeyID, idem.Key, idem.Hash, now)
			if err != nil {
				return err
			}
			if !claimed {
				if string(prev.RequestHash) != string(idem.Hash) {
					return mismatch(idem)
				}
				res = stored[V](prev)
				return nil
			}
		}
		out, v, err := fn(tx, now)
		if err != nil {
			return err
		}
		res = Result[V]{Outcome: out, View: v}
		if idem != nil {
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			tx.QueueSaveIdempotentResponse(idem.KeyID, idem.Key, int(out), b)
		}
		return nil
	})
	if err != nil {
		return Result[V]{}, err
	}
	return res, nil
}

// replay is Replay on the service's store.
func replay[V any](ctx context.Context, s *Service, idem *Idem) (Result[V], bool, error) {
	return Replay[V](ctx, s.store, idem)
}

// idempotent is Idempotent on the service's store and clock.
func idempotent[V any](ctx context.Context, s *Service, idem *Idem, fn func(*store.Tx, time.Time) (Outcome, V, error)) (Result[V], error) {
	return Idempotent(ctx, s.store, s.now, idem, fn)
}

package intents_test

import (
	"context"
	"errors"
	"testing"

	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// The domain answers in its own terms: a result with an outcome and a
// view, a typed error naming the refused field, a replayed key's stored view.
func TestCommandsAnswerResultsAndTypedErrors(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin))
	ctx := context.Background()
	svc := e.Service

	_, err := svc.Create(ctx, intents.CreateRequest{Kind: "order", Reference: "ORD-TYPED", AmountUSD: "-1", Method: "BTC"}, nil)
	var fe *intents.Error
	if !errors.As(err, &fe) || fe.Kind != intents.InvalidAmount || fe.Field != "amount_usd" || !errors.Is(err, intents.ErrInvalidAmount) {
		t.Fatalf("negative amount: %#v", err)
	}
	_, err = svc.Create(ctx, intents.CreateRequest{Kind: "gift", Reference: "ORD-TYPED", AmountUSD: "1.00", Method: "BTC"}, nil)
	if !errors.As(err, &fe) || fe.Field != "kind" || !errors.Is(err, intents.ErrInvalidRequest) || errors.Is(err, intents.ErrInvalidAmount) {
		t.Fatalf("bad kind: %#v", err)
	}

	_, key, err := e.Store.CreateAPIKey(ctx, "typed-key", []string{"storefront"}, e.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	idem := &intents.Idem{KeyID: key.ID, Key: "typed-1", Hash: []byte("h")}
	res, err := svc.Create(ctx, intents.CreateRequest{Kind: "order", Reference: "ORD-TYPED", AmountUSD: "20.00", Method: "BTC"}, idem)
	if err != nil || res.Outcome != intents.Created || res.Replayed() || res.View.ID == "" || res.View.Status != "awaiting_payment" {
		t.Fatalf("create: %+v %v", res, err)
	}
	again, err := svc.Create(ctx, intents.CreateRequest{Kind: "order", Reference: "ORD-TYPED", AmountUSD: "20.00", Method: "BTC"}, idem)
	if err != nil || again.Outcome != intents.Created || !again.Replayed() || len(again.Stored) == 0 {
		t.Fatalf("replay: %+v %v", again, err)
	}
	_, err = svc.Create(ctx, intents.CreateRequest{Kind: "order", Reference: "ORD-TYPED", AmountUSD: "20.00", Method: "BTC"},
		&intents.Idem{KeyID: idem.KeyID, Key: idem.Key, Hash: []byte("other")})
	if !errors.Is(err, intents.ErrIdempotencyMismatch) {
		t.Fatalf("other request under the key: %v", err)
	}
	_, err = svc.Renew(ctx, "pi_nosuch", nil)
	if !errors.Is(err, intents.ErrNotFound) {
		t.Fatalf("renew of no intent: %v", err)
	}
	_, err = svc.Renew(ctx, res.View.ID, nil)
	if !errors.Is(err, intents.ErrConflict) {
		t.Fatalf("renew of a waiting intent: %v", err)
	}
}

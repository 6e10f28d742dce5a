package api

import (
	"net/http"
	"testing"

	"github.com/paywatch/paywatch/intents"
)

// Every error kind of the service has an HTTP status of its own: a kind
// missing from StatusOf would answer 500 (the console's former copy of the
// mapping lacked payment_in_progress).
func TestStatusOfCoversEveryKind(t *testing.T) {
	kinds := map[intents.Kind]int{
		intents.InvalidRequest: 400, intents.InvalidAmount: 400, intents.UnknownMethod: 400, intents.MethodDisabled: 400,
		intents.NotFound: 404,
		intents.Conflict: 409, intents.AlreadyPaid: 409, intents.InsufficientFunds: 409, intents.PaymentInProgress: 409, intents.TooManyOpenIntents: 409,
		intents.IdempotencyMismatch: 409,
		intents.RateUnavailable:     503, intents.ChainUnavailable: 503, intents.AddressPoolEmpty: 503,
	}
	for k, want := range kinds {
		if got := StatusOf(k); got != want {
			t.Errorf("StatusOf(%s) = %d, want %d", k, got, want)
		}
	}
	if got := StatusOf("no_such_kind"); got != http.StatusInternalServerError {
		t.Errorf("unknown kind: %d, want 500", got)
	}
}

// Every kind the service lists has a status other than 500, and a
// command's outcome maps to 201 or 200.
func TestStatusOfCoversEveryListedKindAndOutcome(t *testing.T) {
	for _, k := range intents.Kinds() {
		if StatusOf(k) == http.StatusInternalServerError {
			t.Errorf("StatusOf(%s) = 500", k)
		}
	}
	if got := StatusOfOutcome(intents.Created); got != http.StatusCreated {
		t.Errorf("Created: %d", got)
	}
	if got := StatusOfOutcome(intents.Applied); got != http.StatusOK {
		t.Errorf("Applied: %d", got)
	}
}

package intents

import (
	"errors"
	"fmt"
)

// Kind classifies a service error for the API (it maps to an HTTP status
// and an error code).
type Kind string

// The error kinds of API.md.
const (
	InvalidRequest    Kind = "invalid_request"
	InvalidAmount     Kind = "invalid_amount"
	UnknownMethod     Kind = "unknown_method"
	MethodDisabled    Kind = "method_disabled"
	NotFound          Kind = "not_found"
	Conflict          Kind = "conflict"
	AlreadyPaid       Kind = "already_paid"
	InsufficientFunds Kind = "insufficient_funds"
	// PaymentInProgress: a balance debit for an order whose crypto payment
	// is detected and covers it (it waits for confirmations).
	PaymentInProgress   Kind = "payment_in_progress"
	IdempotencyMismatch Kind = "idempotency_mismatch"
	RateUnavailable     Kind = "rate_unavailable"
	ChainUnavailable    Kind = "chain_unavailable"
	AddressPoolEmpty    Kind = "address_pool_empty"
)

// Error is a service error the API shows to the caller as is.
type Error struct {
	Kind    Kind
	Message string
}

func (e *Error) Error() string { return string(e.Kind) + ": " + e.Message }

// Is matches errors of the same kind, so errors.Is(err, &Error{Kind: K}) works.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Kind == e.Kind && t.Message == ""
}

func fail(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// KindOf returns the kind of a service error, or "" for an internal one.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

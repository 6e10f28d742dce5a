package intents

import (
	"errors"
	"fmt"
)

// Kind classifies a service error for the API (it maps to an HTTP status
// and an error code).
type Kind string

// The error kinds of api/openapi.yaml.
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
	// TooManyOpenIntents: a creation for a payable that already has as
	// many open intents as limits.open_intents_per_payable allows.
	TooManyOpenIntents Kind = "too_many_open_intents"
)

// Error is a service error the API shows to the caller as is. The kinds
// are a closed set (above); the API maps each to an HTTP status and code.
type Error struct {
	Kind    Kind
	Message string
	// Field names the request field an invalid_request or invalid_amount
	// error is about ("" when it is about no one field).
	Field string
}

// Sentinels of each kind, for errors.Is: errors.Is(err, ErrNotFound) holds
// for any not_found error whatever its message.
var (
	ErrInvalidRequest      error = &Error{Kind: InvalidRequest}
	ErrInvalidAmount       error = &Error{Kind: InvalidAmount}
	ErrUnknownMethod       error = &Error{Kind: UnknownMethod}
	ErrMethodDisabled      error = &Error{Kind: MethodDisabled}
	ErrNotFound            error = &Error{Kind: NotFound}
	ErrConflict            error = &Error{Kind: Conflict}
	ErrAlreadyPaid         error = &Error{Kind: AlreadyPaid}
	ErrInsufficientFunds   error = &Error{Kind: InsufficientFunds}
	ErrPaymentInProgress   error = &Error{Kind: PaymentInProgress}
	ErrIdempotencyMismatch error = &Error{Kind: IdempotencyMismatch}
	ErrRateUnavailable     error = &Error{Kind: RateUnavailable}
	ErrChainUnavailable    error = &Error{Kind: ChainUnavailable}
	ErrAddressPoolEmpty    error = &Error{Kind: AddressPoolEmpty}
	ErrTooManyOpenIntents  error = &Error{Kind: TooManyOpenIntents}
)

// Kinds lists every error kind, for the API's mapping test.
func Kinds() []Kind {
	return []Kind{InvalidRequest, InvalidAmount, UnknownMethod, MethodDisabled, NotFound, Conflict, AlreadyPaid,
		InsufficientFunds, PaymentInProgress, IdempotencyMismatch, RateUnavailable, ChainUnavailable, AddressPoolEmpty,
		TooManyOpenIntents}
}

func (e *Error) Error() string { return string(e.Kind) + ": " + e.Message }

// Is matches errors of the same kind, so errors.Is(err, &Error{Kind: K}) works.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Kind == e.Kind && t.Message == ""
}

// Fail returns an error of kind k the API shows as is (finance, reports).
func Fail(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an error of kind k (invalid_request or invalid_amount)
// about one request field.
func Invalid(field string, k Kind, format string, args ...any) error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...), Field: field}
}

// KindOf returns the kind of a service error, or "" for an internal one.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

package intents

import (
	"crypto/sha256"
	"fmt"
	"regexp"
	"strings"

	"github.com/paywatch/paywatch/payment"
)

// CreateRequest is what a storefront asks for: a payable (kind, reference,
// account, amount) and the method to pay it with.
type CreateRequest struct {
	Kind      payment.PayableKind `json:"kind"`
	Reference string              `json:"reference"`
	Account   string              `json:"account"`
	AmountUSD string              `json:"amount_usd"`
	Method    string              `json:"method"`
	// ReturnURL is where the hosted payment page sends the customer once
	// paid (optional; omitted from the request hash when empty, so keys
	// stored before it existed replay).
	ReturnURL string `json:"return_url,omitempty"`
	// Locale is the hosted payment page's language, one of its catalogue
	// (optional, omitted from the request hash when empty; without it the
	// customer's browser decides).
	Locale string `json:"locale,omitempty"`
	// Store is the store the intent is for ("": the default store): its
	// namespace of references and accounts, its addresses. It comes from
	// the caller's API key, never from the body.
	Store string `json:"-"`
}

// Idem is an Idempotency-Key claim: the caller's key id, the key, and the
// hash of the request (method, path, body).
type Idem struct {
	KeyID string
	Key   string
	Hash  []byte
}

// RequestHash hashes what makes two requests "the same".
func RequestHash(method, path string, body []byte) []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s\n", method, path)
	h.Write(body)
	return h.Sum(nil)
}

var referencePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/#-]{0,199}$`)

// ValidName reports whether s is a valid reference or account name: 1-200
// characters of letters, digits and ._:/#-, starting with a letter or digit.
// The API checks path parameters with it before they reach the database.
func ValidName(s string) bool { return referencePattern.MatchString(s) }

// methodNames lists every method for errors, in payment.Methods' order.
var methodNames = func() string {
	names := make([]string, len(payment.Methods))
	for i, m := range payment.Methods {
		names[i] = string(m.Method)
	}
	return strings.Join(names, ", ")
}()

// methodFor resolves and checks a method name.
func (s *Service) methodFor(name string) (payment.MethodInfo, error) {
	info, ok := payment.LookupMethod(payment.Method(name))
	if !ok {
		return info, Fail(UnknownMethod, "unknown method %q: use one of %s", name, methodNames)
	}
	if m := s.cfg.Methods[info.Method]; m == nil || !m.Enabled {
		return info, Fail(MethodDisabled, "method %s is disabled on this paywatch", name)
	}
	return info, nil
}

// validate checks a create request and returns its USD amount.
func (s *Service) validate(req CreateRequest) (payment.Cents, payment.MethodInfo, error) {
	var info payment.MethodInfo
	if req.Kind != payment.Order && req.Kind != payment.Topup {
		return 0, info, Invalid("kind", InvalidRequest, "kind must be \"order\" or \"topup\"")
	}
	if !ValidName(req.Reference) {
		return 0, info, Invalid("reference", InvalidRequest, "reference must be 1-200 characters of letters, digits and ._:/#-")
	}
	if req.Kind == payment.Topup && req.Account == "" {
		return 0, info, Invalid("account", InvalidRequest, "account is required for a topup")
	}
	if req.Account != "" && !ValidName(req.Account) {
		return 0, info, Invalid("account", InvalidRequest, "account must be 1-200 characters of letters, digits and ._:/#-")
	}
	usd, err := payment.ParseUSD(req.AmountUSD)
	if err != nil || usd <= 0 {
		return 0, info, Invalid("amount_usd", InvalidAmount, "amount_usd must be a positive decimal string with at most 2 decimals, like \"249.00\"")
	}
	if req.Kind == payment.Topup && !s.topup[usd] {
		return 0, info, Invalid("amount_usd", InvalidAmount, "a topup must be one of %v USD", s.cfg.TopupAmounts)
	}
	if req.ReturnURL != "" {
		if s.opt.Pages == nil {
			return 0, info, Invalid("return_url", InvalidRequest, "return_url is the hosted payment page's button, and the page is off on this paywatch (checkout.enabled)")
		}
		if err := s.opt.Pages.CheckReturnURL(req.Store, req.ReturnURL); err != nil {
			return 0, info, Invalid("return_url", InvalidRequest, "return_url %v", err)
		}
	}
	if req.Locale != "" {
		if s.opt.Pages == nil {
			return 0, info, Invalid("locale", InvalidRequest, "locale is the hosted payment page's language, and the page is off on this paywatch (checkout.enabled)")
		}
		if err := s.opt.Pages.CheckLocale(req.Store, req.Locale); err != nil {
			return 0, info, Invalid("locale", InvalidRequest, "locale %v", err)
		}
	}
	info, err = s.methodFor(req.Method)
	return usd, info, err
}

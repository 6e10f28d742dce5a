package api

import (
	"errors"
	"net/http"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// MethodView is one entry of GET /v1/methods.
type MethodView struct {
	Method        string `json:"method"`
	Network       string `json:"network"`
	Asset         string `json:"asset"`
	Decimals      int    `json:"decimals"`
	Enabled       bool   `json:"enabled"`
	Confirmations int    `json:"confirmations"`
	Available     bool   `json:"available"`
	Reason        string `json:"reason,omitempty"`
	// DustMin is the method's dust minimum in the asset (a smaller transfer
	// is never credited on its own).
	DustMin string `json:"dust_min,omitempty"`
	// MinAmountUSD is the smallest amount_usd an intent of the method
	// accepts at the current quote (its crypto amount reaches DustMin);
	// absent without a quote.
	MinAmountUSD *string `json:"min_amount_usd,omitempty"`
}

func (s *Server) methods(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	shop, ok := s.shopOf(w, r, key)
	if !ok {
		return
	}
	health := map[string]NetworkStatus{}
	if s.status != nil {
		nets, err := s.status.Networks(r.Context())
		if err != nil {
			s.internal(w, r, err)
			return
		}
		for _, n := range nets {
			health[n.Network] = n
		}
	}
	out := []MethodView{}
	now := s.now()
	for _, m := range payment.Methods {
		mc := s.cfg.Methods[m.Method]
		v := MethodView{Method: string(m.Method), Network: string(m.Network), Asset: m.Symbol, Decimals: m.Decimals,
			Enabled: mc != nil && mc.Enabled}
		if mc != nil && mc.Confirmations != nil {
			v.Confirmations = *mc.Confirmations
		}
		if s.svc != nil {
			v.Confirmations = s.svc.StoreConfirmations(shop, m.Method, v.Confirmations)
		}
		if !v.Enabled {
			v.Reason = "method disabled"
			out = append(out, v)
			continue
		}
		q, err := s.svc.Quote(m.Symbol, now)
		if err == nil {
			min, dust := s.svc.MinimumUSD(m, q)
			usd := min.String()
			v.DustMin, v.MinAmountUSD = payment.TrimUnits(dust, m.Decimals), &usd
		}
		switch {
		case s.svc != nil && !s.svc.StoreHasSource(shop, m.Network):
			// The store has no extended key (or pool) of its own there:
			// its money never lands on another store's addresses.
			v.Reason = "this store has no extended public key for " + string(m.Network)
			if m.Network == payment.Solana {
				v.Reason = "this store has no Solana address pool"
			}
		case health[string(m.Network)].Available != "":
			v.Reason = health[string(m.Network)].Available
		case err != nil:
			v.Reason = err.Error()
		default:
			v.Available = true
		}
		out = append(out, v)
	}
	writeJSON(w, 200, out)
}

func (s *Server) createIntent(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	if !s.creationAllowed(w, key) {
		return
	}
	shop, ok := s.shopOf(w, r, key)
	if !ok {
		return
	}
	var req intents.CreateRequest
	claim, ok := s.decodeClaim(w, r, key, &req)
	if !ok {
		return
	}
	if !forbidAccount(w, key, req.Account) {
		return
	}
	req.Store = shop
	res, err := s.svc.Create(r.Context(), req, claim)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeResult(w, res)
}

func (s *Server) getIntent(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	v, err := s.visibleIntent(r, key)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !forbidAccount(w, key, deref(v.Account)) {
		return
	}
	writeJSON(w, 200, v)
}

func (s *Server) intentQR(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	v, err := s.visibleIntent(r, key)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !forbidAccount(w, key, deref(v.Account)) {
		return
	}
	png, err := qrcode.Encode(v.PaymentURI, qrcode.Medium, 320)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.WriteHeader(200)
	_, _ = w.Write(png)
}

func (s *Server) reportIntent(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	var empty struct{}
	if _, ok := s.decode(w, r, &empty, true); !ok {
		return
	}
	if !s.intentCovered(w, r, key) {
		return
	}
	v, err := s.svc.Report(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, 200, v)
}

func (s *Server) renewIntent(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	var empty struct{}
	if _, ok := s.decode(w, r, &empty, true); !ok {
		return
	}
	if !s.intentCovered(w, r, key) || !s.creationAllowed(w, key) {
		return
	}
	claim, err := idem(r, key, nil)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	res, err := s.svc.Renew(r.Context(), r.PathValue("id"), claim)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeResult(w, res)
}

// PayableView is GET /v1/payables/{kind}/{reference}.
type PayableView struct {
	ID           int64               `json:"id"`
	Kind         payment.PayableKind `json:"kind"`
	Reference    string              `json:"reference"`
	Account      *string             `json:"account"`
	AmountUSD    string              `json:"amount_usd"`
	Status       string              `json:"status"`
	PaidByIntent *string             `json:"paid_by_intent"`
	PaidByEntry  *string             `json:"paid_by_ledger_entry"`
	PaidAt       any                 `json:"paid_at"`
	Intents      []views.Intent      `json:"intents"`
}

// visibleIntent is the intent of the path as the key may see it: another
// store's intent is not found, with the body of an id that does not exist.
func (s *Server) visibleIntent(r *http.Request, key store.APIKey) (views.Intent, error) {
	id := r.PathValue("id")
	v, err := s.svc.Get(r.Context(), id)
	if err == nil && !key.Sees(v.Store) {
		return views.Intent{}, intents.Fail(intents.NotFound, "no intent %q", id)
	}
	return v, err
}

// intentCovered checks, before a change, that the intent of the path is
// in the key's store and binding; false means an answer was written.
func (s *Server) intentCovered(w http.ResponseWriter, r *http.Request, key store.APIKey) bool {
	if key.AccountPrefix == "" && key.Store == "" {
		return true
	}
	in, err := s.store.GetIntent(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && !key.Sees(in.Store)) {
		s.fail(w, r, intents.Fail(intents.NotFound, "no intent %q", r.PathValue("id")))
		return false
	}
	if err != nil {
		s.internal(w, r, err)
		return false
	}
	return forbidAccount(w, key, in.Account)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (s *Server) getPayable(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	kind, ref := r.PathValue("kind"), r.PathValue("reference") // checked at the edge
	shop, ok := s.shopOf(w, r, key)
	if !ok {
		return
	}
	p, err := s.store.PayableByReference(r.Context(), shop, kind, ref)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "not_found", "no "+kind+" "+ref)
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if !forbidAccount(w, key, p.Account) {
		return
	}
	v := PayableView{ID: p.ID, Kind: p.Kind, Reference: p.Reference, AmountUSD: payment.Cents(p.AmountCents).String(),
		Status: "unpaid", Intents: []views.Intent{}}
	if p.Account != "" {
		v.Account = &p.Account
	}
	if p.PaidAt != nil {
		v.Status, v.PaidAt = "paid", p.PaidAt.UTC()
	}
	if p.PaidByIntent != "" {
		v.PaidByIntent = &p.PaidByIntent
	}
	if p.PaidByEntry != "" {
		v.PaidByEntry = &p.PaidByEntry
	}
	ins, err := s.store.IntentsByPayable(r.Context(), p.ID)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	for _, in := range ins {
		iv, err := s.svc.Get(r.Context(), in.ID)
		if err != nil {
			s.internal(w, r, err)
			return
		}
		v.Intents = append(v.Intents, iv)
	}
	writeJSON(w, 200, v)
}

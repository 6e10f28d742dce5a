package api

import (
	"net/http"

	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/store"
)

// createPayable serves POST /v1/payables: a payable for the hosted payment
// page, where the customer picks the method (issue 35 item 3). It answers
// the payable with its payment_page_url: 201 the first time, 200 for the
// same payable again (idempotent on kind and reference); no intent and no
// address is made until the customer picks.
func (s *Server) createPayable(w http.ResponseWriter, r *http.Request, key store.APIKey) {
	shop, ok := s.shopOf(w, r, key)
	if !ok {
		return
	}
	var req intents.PayableRequest
	if _, ok := s.decode(w, r, &req, false); !ok {
		return
	}
	if !forbidAccount(w, key, req.Account) {
		return
	}
	req.Store = shop
	res, err := s.svc.CreatePayable(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeResult(w, res)
}

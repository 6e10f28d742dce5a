package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

func (s *Server) getStatus(w http.ResponseWriter, r *http.Request, _ store.APIKey) {
	if s.status == nil {
		writeJSON(w, 200, map[string]any{"networks": []NetworkStatus{}, "rates": s.ratesStatus()})
		return
	}
	nets, err := s.status.Networks(r.Context())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	rec, err := s.reconcileStatus(r.Context())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, 200, map[string]any{"networks": nets, "rates": s.ratesStatus(), "reconcile": rec})
}

// RatesStatus is the rates part of GET /v1/status: where prices come from
// and how many must agree. SingleSource is true when one source alone sets
// prices (an explicit rates.min_sources: 1).
type RatesStatus struct {
	Sources      []string `json:"sources"`
	MinSources   int      `json:"min_sources"`
	SingleSource bool     `json:"single_source"`
}

func (s *Server) ratesStatus() *RatesStatus {
	if s.cfg == nil {
		return nil
	}
	return &RatesStatus{Sources: s.cfg.Rates.Sources, MinSources: s.cfg.Rates.MinSources, SingleSource: s.cfg.Rates.MinSources == 1}
}

// RescanRequest is the body of POST /v1/networks/{network}/rescan.
type RescanRequest struct {
	FromHeight *int64 `json:"from_height"`
}

func (s *Server) rescan(w http.ResponseWriter, r *http.Request, _ store.APIKey) {
	network := r.PathValue("network")
	if !payment.Network(network).Valid() {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("unknown network %q", network))
		return
	}
	var req RescanRequest
	if _, ok := s.decode(w, r, &req, false); !ok {
		return
	}
	if req.FromHeight == nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "from_height must be a non-negative block height")
		return
	}
	err := s.store.RequestRescan(r.Context(), network, *req.FromHeight, s.now().UTC())
	var rerr *store.RescanRangeError
	if errors.As(err, &rerr) {
		writeError(w, http.StatusBadRequest, "invalid_request", rerr.Error())
		return
	}
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusConflict, "conflict", fmt.Sprintf("%s has not been scanned yet; nothing to rescan", network))
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"network": network, "from_height": *req.FromHeight, "status": "scheduled"})
}

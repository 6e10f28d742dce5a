package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// ReconcileStatus is the reconciler part of GET /v1/status (issue 27):
// each network's progress and last run, the findings not resolved, and the
// newest of them with the node's answer and ours.
type ReconcileStatus struct {
	Runs         []store.ReconcileRun `json:"runs"`
	OpenFindings int64                `json:"open_findings"`
	LiveFindings int64                `json:"live_findings"`
	Findings     []store.Finding      `json:"findings"`
}

// statusFindings is how many live findings /v1/status lists.
const statusFindings = 20

func (s *Server) reconcileStatus(ctx context.Context) (*ReconcileStatus, error) {
	f, err := s.store.StatusReconcile(ctx, statusFindings)
	if err != nil {
		return nil, err
	}
	runs, counts, live := f.Runs, f.Counts, f.Live
	out := &ReconcileStatus{Runs: runs, Findings: live}
	if out.Runs == nil {
		out.Runs = []store.ReconcileRun{}
	}
	if out.Findings == nil {
		out.Findings = []store.Finding{}
	}
	for k, n := range counts {
		out.LiveFindings += n
		if k[2] == store.FindingOpen {
			out.OpenFindings += n
		}
	}
	return out, nil
}

// reconcileNetwork asks the daemon's reconciler for a run of a network
// (POST /v1/networks/{network}/reconcile): idempotent, a pending request
// stays one request; the daemon picks it up within seconds.
func (s *Server) reconcileNetwork(w http.ResponseWriter, r *http.Request, _ store.APIKey) {
	network := payment.Network(r.PathValue("network"))
	if !network.Valid() {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("unknown network %q", network))
		return
	}
	if s.cfg != nil {
		if nc := s.cfg.Networks[network]; nc == nil || !nc.Enabled {
			writeError(w, http.StatusConflict, "conflict", fmt.Sprintf("%s is not enabled; nothing to reconcile", network))
			return
		}
	}
	if err := s.store.RequestReconcile(r.Context(), string(network), s.now().UTC()); err != nil {
		s.internal(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"network": network, "status": "scheduled"})
}

package chainstest

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Produce calls mine every interval until ctx ends, as a fake node's block
// (or slot) production, and returns ctx's error.
func Produce(ctx context.Context, interval time.Duration, mine func()) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			mine()
		}
	}
}

// ControlEndpoint mounts POST path on mux: the JSON body (64 KiB at most,
// unknown fields refused) decodes into a Req, f's result is written as JSON
// and f's error as a 400. The fakes' sandbox remote controls are made of
// these.
func ControlEndpoint[Req any](mux *http.ServeMux, path string, f func(Req) (any, error)) {
	mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
		var req Req
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
			return
		}
		out, err := f(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
}

package bitcoin

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/paywatch/paywatch/payment"
)

// rpcReply is what a fake node handler answers: a result, or an error object.
type rpcReply struct {
	result any
	code   int
	msg    string
}

// fakeNode serves JSON-RPC 1.0 like Bitcoin Core: basic auth required, an
// error object with HTTP 500. handle gets the method and raw params.
func fakeNode(t *testing.T, handle func(method string, params []json.RawMessage) rpcReply) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != "u" || pass != "secret-pass" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		type request struct {
			ID     json.RawMessage   `json:"id"`
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
		}
		if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
			// A batch, answered as Core does: an array of answers, in
			// order, with HTTP 200 whatever each call's outcome.
			var reqs []request
			if err := json.Unmarshal(b, &reqs); err != nil {
				http.Error(w, "bad request", http.StatusBadRequest)
				return
			}
			out := make([]map[string]any, len(reqs))
			for i, req := range reqs {
				rep := handle(req.Method, req.Params)
				out[i] = map[string]any{"result": rep.result, "error": nil, "id": req.ID}
				if rep.code != 0 {
					out[i] = map[string]any{"result": nil, "id": req.ID, "error": map[string]any{"code": rep.code, "message": rep.msg}}
				}
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(out)
			return
		}
		var req request
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		rep := handle(req.Method, req.Params)
		w.Header().Set("Content-Type", "application/json")
		if rep.code != 0 {
			w.WriteHeader(http.StatusInternalServerError)
			_ = json.NewEncoder(w).Encode(map[string]any{"result": nil, "id": req.ID,
				"error": map[string]any{"code": rep.code, "message": rep.msg}})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"result": rep.result, "error": nil, "id": req.ID})
	}))
	t.Cleanup(srv.Close)
	return "http://u:secret-pass@" + srv.Listener.Addr().String()
}

func newTestClient(t *testing.T, network payment.Network, chain, url string) *Client {
	t.Helper()
	c, err := New(Config{Network: network, Chain: chain, URL: url})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

package main

import (
	"context"
	"net/http"
	"time"
)

// waitAvailable polls GET /v1/status until every enabled network accepts
// intents, and returns the reasons of those that still do not at timeout.
func waitAvailable(ctx context.Context, url, key string, timeout time.Duration) []string {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last []string
	for {
		var st struct {
			Networks []struct {
				Network     string `json:"network"`
				Enabled     bool   `json:"enabled"`
				Unavailable string `json:"unavailable_reason"`
			} `json:"networks"`
		}
		err := apiCall(ctx, url, key, http.MethodGet, "/v1/status", nil, &st)
		last = last[:0]
		if err != nil {
			last = append(last, "API: "+err.Error())
		}
		for _, n := range st.Networks {
			if n.Enabled && n.Unavailable != "" {
				last = append(last, n.Network+": "+n.Unavailable)
			}
		}
		if err == nil && len(last) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return last
		case <-time.After(200 * time.Millisecond):
		}
	}
}

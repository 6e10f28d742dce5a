package nodes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
)

// newPool builds network n's endpoint pool when its config lists endpoints
// (nil when it names one rpc_url). Each endpoint's key header or headers
// come from the environment through getenv.
func newPool(cfg *config.Config, n payment.Network, getenv func(string) string, log *slog.Logger) (*endpoints.Pool, error) {
	nc := cfg.Networks[n]
	if len(nc.EndpointList) == 0 {
		return nil, nil
	}
	eps := nc.Endpoints()
	if len(eps) == 0 {
		return nil, fmt.Errorf("networks.%s.endpoints: not resolved: the config must come from config.Load, Parse or Validate", n)
	}
	specs := make([]endpoints.Spec, 0, len(eps))
	for _, e := range eps {
		h := http.Header{}
		if e.APIKeyEnv != "" {
			h.Set(config.APIKeyHeader(n), getenv(e.APIKeyEnv))
		}
		if e.HeadersEnv != "" {
			pairs, err := config.ParseHeaders(getenv(e.HeadersEnv))
			if err != nil {
				return nil, fmt.Errorf("networks.%s.endpoints.%s.headers_env: %w", n, e.Name, err)
			}
			for _, kv := range pairs {
				h.Add(kv[0], kv[1])
			}
		}
		specs = append(specs, endpoints.Spec{Name: e.Name, URL: e.URL, Scans: e.Role.Scans(), Priority: e.Priority, Header: h,
			RatePerSecond: e.MaxRequestsPerSecond, Burst: e.Burst, DailyBudget: e.DailyBudget})
	}
	// A recovered endpoint is seen within a few poll intervals.
	return endpoints.New(specs, endpoints.Options{Network: string(n), MaxLagBlocks: nc.MaxLagBlocks,
		LagGrace:   max(3*nc.PollInterval.Duration, 10*time.Second),
		MaxBackoff: min(30*time.Second, max(4*nc.PollInterval.Duration, time.Second)), Log: log})
}

// pools are the endpoint pools of the sources New built, for Pool.
var pools sync.Map // chains.Source -> *endpoints.Pool

// Pool returns the endpoint pool src sends through, or nil when src was
// not built by New from a config listing endpoints.
func Pool(src chains.Source) *endpoints.Pool {
	if p, ok := pools.Load(src); ok {
		return p.(*endpoints.Pool)
	}
	return nil
}

// pooledClient is the HTTP client of a chain client sending through pool.
func pooledClient(pool *endpoints.Pool) *http.Client {
	return &http.Client{Transport: pool.Transport(true), Timeout: 60 * time.Second}
}

// firstScanURL is the URL of the first scanning endpoint, which a
// websocket for notifications is derived from when notify_url is empty.
func firstScanURL(nc *config.Network) string {
	for _, e := range nc.Endpoints() {
		if e.Role.Scans() {
			return e.URL
		}
	}
	return ""
}

// probedSource is what a pool asks each endpoint: its tip and its chain.
type probedSource interface {
	Tip(ctx context.Context) (chains.Height, error)
	chains.ChainVerifier
}

// runPool probes the pool's endpoints every poll interval until ctx ends,
// through src's own reads.
func runPool(ctx context.Context, pool *endpoints.Pool, src probedSource, nc *config.Network) {
	go pool.Run(ctx, endpoints.Probes{
		Head: func(ctx context.Context) (int64, error) {
			h, err := src.Tip(ctx)
			return int64(h), err
		},
		Chain: func(ctx context.Context) (string, error) {
			err := src.VerifyChain(ctx, nc.Chain)
			if errors.Is(err, chains.ErrWrongChain) {
				return chains.RedactError(err).Error(), nil
			}
			return "", err
		},
	}, nc.PollInterval.Duration)
}

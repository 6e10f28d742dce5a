package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
)

// apiClient calls the daemon's API with one storefront key over kept-alive
// connections.
type apiClient struct {
	base, key string
	http      http.Client
}

// errStatus is a non-2xx answer.
type errStatus struct {
	code int
	body string
}

func (e *errStatus) Error() string { return fmt.Sprintf("HTTP %d: %s", e.code, e.body) }

func (c *apiClient) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &errStatus{resp.StatusCode, string(b)}
	}
	return json.Unmarshal(b, out)
}

// waitListening returns once the daemon answers GET /healthz.
func (c *apiClient) waitListening(ctx context.Context, exited <-chan error) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/healthz", nil)
		if err != nil {
			return err
		}
		resp, err := c.http.Do(req)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("the daemon exited: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("the daemon does not listen: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// intent is what the program reads of an intent.
type intent struct {
	ID              string `json:"id"`
	Address         string `json:"address"`
	AmountBaseUnits string `json:"amount_base_units"`
	Status          string `json:"status"`
	Transfers       []struct {
		Confirmations int64 `json:"confirmations"`
	} `json:"transfers"`
}

// createIntent creates an order of 10 USD, retrying while the daemon is not
// ready for the network yet (503 while its scanner starts).
func (c *apiClient) createIntent(ctx context.Context, m payment.Method, ref string) (intent, error) {
	body := map[string]string{"kind": "order", "reference": ref, "amount_usd": "10.00", "method": string(m)}
	for {
		var in intent
		err := c.call(ctx, http.MethodPost, "/v1/intents", body, &in)
		var es *errStatus
		if err == nil || (errors.As(err, &es) && es.code != http.StatusServiceUnavailable) {
			return in, err
		}
		select {
		case <-ctx.Done():
			return in, fmt.Errorf("create intent: %w (last: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// detections follows the intent.detected events of the API's long-poll feed
// and remembers when each intent's first arrived.
type detections struct {
	mu      sync.Mutex
	at      map[string]time.Time
	changed chan struct{} // closed and replaced on every arrival
}

func newDetections() *detections {
	return &detections{at: map[string]time.Time{}, changed: make(chan struct{})}
}

// follow long-polls GET /v1/events?type=intent.detected until ctx ends.
func (d *detections) follow(ctx context.Context, c *apiClient) error {
	after := ""
	for {
		var page struct {
			Events []struct {
				Data struct {
					ID string `json:"id"`
				} `json:"data"`
			} `json:"events"`
			Next string `json:"next"`
		}
		q := url.Values{"type": {"intent.detected"}, "wait": {"30s"}, "limit": {"1000"}}
		if after != "" {
			q.Set("after", after)
		}
		err := c.call(ctx, http.MethodGet, "/v1/events?"+q.Encode(), nil, &page)
		now := time.Now()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("event feed: %w", err)
		}
		d.mu.Lock()
		for _, e := range page.Events {
			if _, ok := d.at[e.Data.ID]; !ok {
				d.at[e.Data.ID] = now
			}
		}
		if len(page.Events) > 0 {
			close(d.changed)
			d.changed = make(chan struct{})
		}
		d.mu.Unlock()
		after = page.Next
	}
}

// wait returns when the intent's intent.detected event arrived.
func (d *detections) wait(ctx context.Context, id string) (time.Time, error) {
	for {
		d.mu.Lock()
		at, ok := d.at[id]
		ch := d.changed
		d.mu.Unlock()
		if ok {
			return at, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("no intent.detected for %s: %w", id, ctx.Err())
		case <-ch:
		}
	}
}

// Figures measured per network.
const (
	figDetected = "detected"
	figConfirm  = "confirmation"
)

// result is the samples of one figure on one network.
type result struct {
	network payment.Network
	figure  string
	poll    time.Duration
	samples []time.Duration
}

// sampleTimeout bounds one sample: far above any poll interval.
const sampleTimeout = time.Minute

// sample takes o.warmup unrecorded and then o.n recorded samples of both
// figures on network n, one intent per sample.
func sample(ctx context.Context, c *apiClient, feed *detections, nd node, n payment.Network, o options) ([]result, error) {
	poll := config.Default().Networks[n].PollInterval.Duration
	det := result{network: n, figure: figDetected, poll: poll}
	conf := result{network: n, figure: figConfirm, poll: poll}
	for i := range o.warmup + o.n {
		d, b, err := sampleOne(ctx, c, feed, nd, n, i, o.pollEvery)
		if err != nil {
			return nil, fmt.Errorf("sample %d: %w", i, err)
		}
		if i >= o.warmup {
			det.samples = append(det.samples, d)
			conf.samples = append(conf.samples, b)
		}
	}
	return []result{det, conf}, nil
}

// sampleOne creates an intent, pays it and times its detection, then mines
// a block and times the transfer's next confirmation count.
func sampleOne(ctx context.Context, c *apiClient, feed *detections, nd node, n payment.Network, i int, every time.Duration) (detected, confirmed time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, sampleTimeout)
	defer cancel()
	in, err := c.createIntent(ctx, nativeMethod(n), fmt.Sprintf("LAT-%s-%d-%d", n, i, time.Now().UnixNano()))
	if err != nil {
		return 0, 0, err
	}
	units, ok := new(big.Int).SetString(in.AmountBaseUnits, 10)
	if !ok {
		return 0, 0, fmt.Errorf("intent %s: amount_base_units %q", in.ID, in.AmountBaseUnits)
	}
	if err := pause(ctx); err != nil {
		return 0, 0, err
	}
	sent := time.Now()
	if err := nd.broadcast(ctx, in.Address, units); err != nil {
		return 0, 0, fmt.Errorf("broadcast: %w", err)
	}
	at, err := feed.wait(ctx, in.ID)
	if err != nil {
		return 0, 0, err
	}
	detected = at.Sub(sent)

	before, err := confirmations(ctx, c, in.ID)
	if err != nil {
		return 0, 0, err
	}
	if err := pause(ctx); err != nil {
		return 0, 0, err
	}
	mined := time.Now()
	if err := nd.mine(ctx); err != nil {
		return 0, 0, fmt.Errorf("mine: %w", err)
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		got, err := confirmations(ctx, c, in.ID)
		if err != nil {
			return 0, 0, err
		}
		if got > before {
			return detected, time.Since(mined), nil
		}
		select {
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("intent %s: still %d confirmations after a block: %w", in.ID, got, ctx.Err())
		case <-tick.C:
		}
	}
}

// confirmations reads the intent's transfer's confirmation count.
func confirmations(ctx context.Context, c *apiClient, id string) (int64, error) {
	var in intent
	if err := c.call(ctx, http.MethodGet, "/v1/intents/"+id, nil, &in); err != nil {
		return 0, err
	}
	if len(in.Transfers) != 1 {
		return 0, fmt.Errorf("intent %s (%s) has %d transfers, want 1", id, in.Status, len(in.Transfers))
	}
	return in.Transfers[0].Confirmations, nil
}

// percentile is the nearest-rank p-th percentile of sorted samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// report prints a table for people and one benchmark-style line per figure
// and network for cmd/paywatch-bench.
func report(w io.Writer, results []result, load0, load1 string, wakes []string) {
	fmt.Fprintf(w, "load average %s at start, %s at end\n", load0, load1)
	fmt.Fprintf(w, "%-9s %-24s %3s %9s %9s %9s %7s %9s\n", "network", "figure", "n", "p50", "p95", "max", "poll", "p95/poll")
	label := map[string]string{figDetected: "broadcast -> detected", figConfirm: "block -> confirmation"}
	for _, r := range results {
		s := slices.Clone(r.samples)
		slices.Sort(s)
		p50, p95, top := percentile(s, 0.50), percentile(s, 0.95), s[len(s)-1]
		fmt.Fprintf(w, "%-9s %-24s %3d %7.0fms %7.0fms %7.0fms %7s %9.3f\n", r.network, label[r.figure], len(s),
			ms(p50), ms(p95), ms(top), r.poll, float64(p95)/float64(r.poll))
	}
	for _, r := range results {
		s := slices.Clone(r.samples)
		slices.Sort(s)
		fmt.Fprintf(w, "BenchmarkLatency/%s/%s %d %.1f p50-ms %.1f p95-ms %.1f max-ms %.0f poll-ms\n", r.network, r.figure,
			len(s), ms(percentile(s, 0.50)), ms(percentile(s, 0.95)), ms(s[len(s)-1]), ms(r.poll))
	}
	for _, l := range wakes {
		fmt.Fprintln(w, "daemon:", l)
	}
}

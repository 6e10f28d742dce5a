package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paywatch/paywatch/api"
	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/webhooks"
)

// lagSample is one network's lag at one time.
type lagSample struct {
	At        time.Time
	LagBlocks int64
	Healthy   bool
}

// lagRing keeps each network's lag samples for the last span (memory only:
// the chart starts empty after a restart).
type lagRing struct {
	mu   sync.Mutex
	span time.Duration
	by   map[string][]lagSample
}

func newLagRing(span time.Duration) *lagRing {
	return &lagRing{span: span, by: map[string][]lagSample{}}
}

func (l *lagRing) add(now time.Time, nets []availability.NetworkStatus) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range nets {
		if !n.Enabled {
			continue
		}
		s := append(l.by[n.Network], lagSample{At: now, LagBlocks: n.LagBlocks, Healthy: n.Healthy})
		i := 0
		for i < len(s) && now.Sub(s[i].At) > l.span {
			i++
		}
		l.by[n.Network] = append([]lagSample(nil), s[i:]...)
	}
}

func (l *lagRing) get(network string) []lagSample {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]lagSample(nil), l.by[network]...)
}

// Run samples network lag for the lag chart until ctx ends.
func (c *Console) Run(ctx context.Context) error {
	if c.status == nil {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(c.opt.SampleEvery)
	defer t.Stop()
	for {
		c.Sample(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Sample records every network's current lag once.
func (c *Console) Sample(ctx context.Context) {
	if c.status == nil {
		return
	}
	nets, err := c.status.Networks(ctx)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("console lag sample failed", "err", err)
		}
		return
	}
	c.lag.add(c.now(), nets)
}

func (c *Console) networkStatus(ctx context.Context) ([]availability.NetworkStatus, error) {
	if c.status == nil {
		return nil, nil
	}
	return c.status.Networks(ctx)
}

type networksData struct {
	Nets     []availability.NetworkStatus
	Critical []availability.NetworkStatus
	Charts   map[string]chart
	Done     string
	// The reconciler (issue 27): each network's last run and the findings
	// not resolved.
	Runs     []store.ReconcileRun
	Findings []store.Finding
	// HasEndpoints is set when a network lists node endpoints (issue 33
	// item 6): their table is shown, names and states, never URLs.
	HasEndpoints bool
}

func (c *Console) networks(w http.ResponseWriter, r *http.Request, s *session) {
	nets, err := c.networkStatus(r.Context())
	if err != nil {
		c.internal(w, r, err)
		return
	}
	d := networksData{Charts: map[string]chart{}}
	for _, n := range nets {
		if !n.Enabled {
			continue
		}
		d.Nets = append(d.Nets, n)
		d.HasEndpoints = d.HasEndpoints || len(n.Endpoints) > 0
		if n.Critical != "" {
			d.Critical = append(d.Critical, n)
		}
		d.Charts[n.Network] = lagChart(n.Network, c.lag.get(n.Network), c.now(), c.lag.span)
	}
	if d.Runs, err = c.store.ReconcileRuns(r.Context()); err != nil {
		c.internal(w, r, err)
		return
	}
	if d.Findings, err = c.store.Findings(r.Context(), "", "", 100); err != nil {
		c.internal(w, r, err)
		return
	}
	q := r.URL.Query()
	if q.Get("done") == "reconcile" {
		d.Done = fmt.Sprintf("Reconcile of %s requested: the daemon checks it within seconds.", q.Get("network"))
	}
	if q.Get("done") == "rescan" {
		d.Done = fmt.Sprintf("Rescan of %s from height %s scheduled: the scanner re-reads those blocks; nothing is counted twice.",
			q.Get("network"), q.Get("from"))
	}
	c.render(w, r, http.StatusOK, "networks", s, "Networks", d)
}

type rescanData struct {
	Network string
	From    int64
	Net     *availability.NetworkStatus
}

// rescan asks for confirmation first (a form without confirm=yes shows
// what will happen), then schedules the rescan with the same checks and
// store call as POST /v1/networks/{network}/rescan.
func (c *Console) rescan(w http.ResponseWriter, r *http.Request, s *session) {
	network := r.PathValue("network")
	if !payment.Network(network).Valid() {
		c.render(w, r, http.StatusNotFound, "error", s, "Not found", errorData{Message: fmt.Sprintf("unknown network %q", network)})
		return
	}
	from, err := strconv.ParseInt(strings.TrimSpace(r.PostFormValue("from_height")), 10, 64)
	if err != nil {
		c.render(w, r, http.StatusBadRequest, "error", s, "Refused", errorData{Message: "from_height must be a non-negative block height"})
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		d := rescanData{Network: network, From: from}
		nets, err := c.networkStatus(r.Context())
		if err != nil {
			c.internal(w, r, err)
			return
		}
		for i := range nets {
			if nets[i].Network == network {
				d.Net = &nets[i]
			}
		}
		c.render(w, r, http.StatusOK, "rescan", s, "Confirm rescan", d)
		return
	}
	err = c.store.RequestRescan(r.Context(), network, from, c.now().UTC())
	var rerr *store.RescanRangeError
	if errors.As(err, &rerr) {
		c.render(w, r, http.StatusBadRequest, "error", s, "Refused", errorData{Message: rerr.Error()})
		return
	}
	if errors.Is(err, store.ErrNotFound) {
		c.render(w, r, http.StatusConflict, "error", s, "Refused", errorData{Message: fmt.Sprintf("%s has not been scanned yet; nothing to rescan", network)})
		return
	}
	if err != nil {
		c.internal(w, r, err)
		return
	}
	c.log.Info("console rescan", "key", s.key.Name, "network", network, "from_height", from)
	http.Redirect(w, r, "/console/networks?"+url.Values{"done": {"rescan"}, "network": {network}, "from": {strconv.FormatInt(from, 10)}}.Encode(), http.StatusSeeOther)
}

type endpointRow struct {
	E       store.WebhookEndpoint
	Backlog int64
}

type webhooksData struct {
	Endpoints []endpointRow
	Log       []store.WebhookAttempt
	// EventTypes maps the log's event ids to their types.
	EventTypes map[string]string
	Endpoint   string
	Done       string
	Error      string
}

func (c *Console) webhooks(w http.ResponseWriter, r *http.Request, s *session) {
	c.renderWebhooks(w, r, s, http.StatusOK, "")
}

// visibleEndpoints are the webhook endpoints the session may see: every
// one for an every-store key, a store's own for a store's key (not the
// every-store endpoints, which hear other stores' events).
func (c *Console) visibleEndpoints(ctx context.Context, s *session) ([]store.WebhookEndpoint, error) {
	eps, err := c.store.WebhookEndpoints(ctx)
	if err != nil || s.ownStore() == "" {
		return eps, err
	}
	var out []store.WebhookEndpoint
	for _, e := range eps {
		if e.Store == s.ownStore() {
			out = append(out, e)
		}
	}
	return out, nil
}

func (c *Console) renderWebhooks(w http.ResponseWriter, r *http.Request, s *session, status int, msg string) {
	eps, err := c.visibleEndpoints(r.Context(), s)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	visible := map[string]bool{}
	types := map[string][]string{}
	for _, wh := range c.cfg.Webhooks {
		types[wh.Name] = wh.Events
	}
	d := webhooksData{Endpoint: r.URL.Query().Get("endpoint"), Error: msg}
	for _, e := range eps {
		visible[e.Name] = true
		n, err := c.store.EventCountAfter(r.Context(), e.LastSeq, types[e.Name], e.Store)
		if err != nil {
			c.internal(w, r, err)
			return
		}
		e.URL, e.LastError = webhooks.RedactURL(e.URL), webhooks.RedactText(e.LastError)
		d.Endpoints = append(d.Endpoints, endpointRow{E: e, Backlog: n})
	}
	if d.Endpoint == "" || visible[d.Endpoint] {
		if d.Log, err = c.store.WebhookAttempts(r.Context(), d.Endpoint, 0, 100); err != nil {
			c.internal(w, r, err)
			return
		}
	}
	if s.ownStore() != "" {
		// A store's key reads its endpoints' lines only (another
		// endpoint named in ?endpoint= shows nothing, as an unknown one).
		kept := d.Log[:0]
		for _, a := range d.Log {
			if visible[a.Endpoint] {
				kept = append(kept, a)
			}
		}
		d.Log = kept
	}
	ids := make([]string, 0, len(d.Log))
	for i := range d.Log {
		d.Log[i].Error = webhooks.RedactText(d.Log[i].Error)
		if d.Log[i].EventID != "" {
			ids = append(ids, d.Log[i].EventID)
		}
	}
	// The log names each event by its type (what a clerk looks for); the
	// id stays on hover and in the API's delivery log.
	if d.EventTypes, err = c.store.EventTypes(r.Context(), ids); err != nil {
		c.internal(w, r, err)
		return
	}
	if r.URL.Query().Get("done") == "redeliver" {
		d.Done = "Redelivery scheduled for " + r.URL.Query().Get("name") + " from seq " + r.URL.Query().Get("from") + "."
	}
	c.render(w, r, status, "webhooks", s, "Webhooks", d)
}

// redeliver moves an endpoint's cursor back, as `paywatch webhooks
// redeliver` does (the same store call and range rule).
func (c *Console) redeliver(w http.ResponseWriter, r *http.Request, s *session) {
	name := r.PathValue("name")
	from, err := strconv.ParseInt(strings.TrimSpace(r.PostFormValue("from_seq")), 10, 64)
	if err != nil {
		c.renderWebhooks(w, r, s, http.StatusBadRequest, "from_seq must be an event seq number")
		return
	}
	eps, err := c.visibleEndpoints(r.Context(), s)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	err = store.ErrNotFound // another store's endpoint: as one that does not exist
	for _, e := range eps {
		if e.Name == name {
			_, err = c.store.RedeliverWebhook(r.Context(), name, from, c.now().UTC())
		}
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		c.renderWebhooks(w, r, s, http.StatusNotFound, "no webhook endpoint "+strconv.Quote(name))
		return
	case errors.Is(err, store.ErrCheck):
		c.renderWebhooks(w, r, s, http.StatusBadRequest, strings.TrimPrefix(err.Error(), store.ErrCheck.Error()+": "))
		return
	case err != nil:
		c.internal(w, r, err)
		return
	}
	c.log.Info("console redelivery", "key", s.key.Name, "endpoint", name, "from_seq", from)
	http.Redirect(w, r, "/console/webhooks?"+url.Values{"done": {"redeliver"}, "name": {name}, "from": {strconv.FormatInt(from, 10)}}.Encode(), http.StatusSeeOther)
}

// liveView is GET /console/live: what pages refresh without a reload.
type liveView struct {
	Seq      int64         `json:"seq"`
	Inbox    *int64        `json:"inbox_unresolved,omitempty"`
	Networks []liveNetwork `json:"networks,omitempty"`
}

type liveNetwork struct {
	Network   string `json:"network"`
	Healthy   bool   `json:"healthy"`
	Critical  string `json:"critical,omitempty"`
	LagBlocks int64  `json:"lag_blocks"`
	Scanned   int64  `json:"scanned_height"`
	Node      int64  `json:"node_height"`
}

// maxLiveWait bounds how long /console/live waits for a new event.
const maxLiveWait = 15 * time.Second

// live long-polls the event feed: given ?seq= (the last event seen, -1
// or none for "answer now"), it waits until a newer event exists or
// maxLiveWait passes, then answers the unresolved inbox count (finance) and
// network health (operator).
//
// The wait is one of the event feed's long-polls (Options.Events), under
// its caps: beyond them the answer is 429 with Retry-After.
func (c *Console) live(w http.ResponseWriter, r *http.Request, s *session) {
	seq, err := strconv.ParseInt(r.URL.Query().Get("seq"), 10, 64)
	if err == nil && seq >= 0 {
		wctx, cancel := context.WithTimeout(r.Context(), maxLiveWait)
		err := c.waitLive(wctx, s, seq)
		cancel()
		if errors.Is(err, api.ErrTooManyWaiters) {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(c.cfg.Events.PollInterval.Seconds()))))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":"rate_limited"}` + "\n"))
			return
		}
		if err != nil {
			c.liveFail(w, r, err)
			return
		}
	}
	ctx := r.Context()
	var v liveView
	last, err := c.store.LastEventSeq(ctx)
	if err != nil {
		c.liveFail(w, r, err)
		return
	}
	v.Seq = last
	if own := s.ownStore(); own != "" {
		// A store's page counts its store's events only: the feed's seq
		// would tell how busy the other stores are.
		if v.Seq, err = c.store.LastStoreEventSeq(ctx, own); err != nil {
			c.liveFail(w, r, err)
			return
		}
	}
	if s.can(ScopeFinance) {
		counts, err := c.store.InboxCounts(ctx, store.InboxFilter{Status: "unresolved", Store: s.ownStore()})
		if err != nil {
			c.liveFail(w, r, err)
			return
		}
		var n int64
		for _, k := range counts {
			n += k
		}
		v.Inbox = &n
	}
	if s.can(ScopeOperator) && s.ownStore() == "" {
		nets, err := c.networkStatus(ctx)
		if err != nil {
			c.liveFail(w, r, err)
			return
		}
		for _, n := range nets {
			if n.Enabled {
				v.Networks = append(v.Networks, liveNetwork{Network: n.Network, Healthy: n.Healthy, Critical: n.Critical,
					LagBlocks: n.LagBlocks, Scanned: n.ScannedHeight, Node: n.NodeHeight})
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// waitLive waits until an event after seq exists (an every-store key) or
// an event of the key's store after seq (a store's key: its pages know
// its store's seq only), or ctx ends (nil then: the answer is "nothing
// new"). Each wait is one of the feed's long-polls, under its caps.
func (c *Console) waitLive(ctx context.Context, s *session, seq int64) error {
	own := s.ownStore()
	if own == "" {
		return c.events.WaitEvents(ctx, s.key.ID, seq)
	}
	for {
		global, err := c.store.LastEventSeq(ctx)
		if err == nil {
			var last int64
			if last, err = c.store.LastStoreEventSeq(ctx, own); err == nil && last > seq {
				return nil
			}
		}
		if err == nil {
			err = c.events.WaitEvents(ctx, s.key.ID, global)
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (c *Console) liveFail(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return
	}
	c.log.Error("console live failed", "err", err)
	http.Error(w, `{"error":"internal"}`, http.StatusInternalServerError)
}

// reconcile asks the daemon's reconciler for a run of a network now.
func (c *Console) reconcile(w http.ResponseWriter, r *http.Request, s *session) {
	network := r.PathValue("network")
	if !payment.Network(network).Valid() {
		c.render(w, r, http.StatusNotFound, "error", s, "Not found", errorData{Message: fmt.Sprintf("unknown network %q", network)})
		return
	}
	if err := c.store.RequestReconcile(r.Context(), network, c.now().UTC()); err != nil {
		c.internal(w, r, err)
		return
	}
	c.log.Info("console reconcile", "key", s.key.Name, "network", network)
	http.Redirect(w, r, "/console/networks?done=reconcile&network="+url.QueryEscape(network), http.StatusSeeOther)
}

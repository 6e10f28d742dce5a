package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/chains/endpoints"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// Issue 33 item 6: the networks page lists each node endpoint of a pool as
// /v1/status reports it (name, state, head, lag, latency, throttles,
// calls per minute, budget used), and never an endpoint's URL, host, path
// key or credentials.
func TestChromiumNetworksPageListsEndpoints(t *testing.T) {
	// A healthy node, a provider that throttles (its key in the path and
	// in the user info) and a backup that is down.
	node := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"head": 120}`)
	}))
	defer node.Close()
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "600")
		http.Error(w, `{"error":"too many requests"}`, http.StatusTooManyRequests)
	}))
	defer provider.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	providerURL := strings.Replace(provider.URL, "http://", "http://keyuser:s3cretKEY@", 1) + "/v3/0123456789abcdef0123456789abcdef"
	pool, err := endpoints.New([]endpoints.Spec{
		{Name: "provider", URL: providerURL, Scans: true, Priority: 0, RatePerSecond: 50, Burst: 50, DailyBudget: 100000},
		{Name: "node", URL: node.URL, Scans: true, Priority: 1},
		{Name: "backup", URL: downURL, Scans: true, Priority: 2},
	}, endpoints.Options{Network: "bitcoin", MaxLagBlocks: 5, MaxBackoff: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: pool.Transport(true)}
	pool.Probe(context.Background(), endpoints.Probes{Head: func(ctx context.Context) (int64, error) {
		req, err := http.NewRequestWithContext(ctx, "POST", endpoints.Placeholder, strings.NewReader(`{}`))
		if err != nil {
			return 0, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		var h struct{ Head int64 }
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
			return 0, err
		}
		return h.Head, nil
	}}, false, 10*time.Second)

	s := newSite(t, paywatchtest.WithPool(payment.Bitcoin, pool))
	ctx := browser(t, 1280)
	signInBrowser(t, ctx, s.URL, s.Keys["operator"])
	open(t, ctx, s.URL+"/console/networks")
	_, body := s.Do("GET", "/v1/status", "operator", nil)
	var status struct{ Networks []availability.NetworkStatus }
	if err := json.Unmarshal(body, &status); err != nil {
		t.Fatal(err)
	}
	var eps []endpoints.Status
	for _, n := range status.Networks {
		if n.Network == "bitcoin" {
			eps = n.Endpoints
		}
	}
	want := map[string]string{"provider": "throttled", "node": "healthy", "backup": "unreachable"}
	if len(eps) != len(want) {
		t.Fatalf("/v1/status endpoints %+v, want %v", eps, want)
	}
	for _, e := range eps {
		if string(e.State) != want[e.Name] {
			t.Fatalf("%s is %s in /v1/status, want %s", e.Name, e.State, want[e.Name])
		}
		row := `#node-endpoints tr[data-network="bitcoin"][data-endpoint="` + e.Name + `"]`
		cells := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('`+row+` td')).map(c => c.textContent.trim())`)
		budget := fmt.Sprint(e.BudgetUsed) + " today"
		if e.DailyBudget > 0 {
			budget = fmt.Sprintf("%d / %d", e.BudgetUsed, e.DailyBudget)
		}
		wantCells := []string{"bitcoin", e.Name, string(e.State), fmt.Sprint(e.Head), fmt.Sprint(e.Lag), fmt.Sprint(e.LatencyMillis),
			fmt.Sprint(e.Throttles), fmt.Sprint(e.CallsPerMinute), budget}
		if strings.Join(cells, "|") != strings.Join(wantCells, "|") {
			t.Fatalf("%s on screen %q, want %q (API %+v)", e.Name, cells, wantCells, e)
		}
	}
	if e := eps[0]; e.Name != "provider" || e.Throttles != 1 || e.BudgetUsed != 1 {
		t.Fatalf("provider %+v: want one throttle and one request of its budget", e)
	}
	if e := eps[1]; e.Head != 120 || e.Lag != 0 {
		t.Fatalf("node %+v: want head 120, lag 0", e)
	}
	shoot(t, ctx, shotDir(t), "networks-endpoints")
	page := eval[string](t, ctx, `document.documentElement.outerHTML`)
	for _, secret := range []string{"s3cretKEY", "keyuser", "0123456789abcdef0123456789abcdef",
		strings.TrimPrefix(provider.URL, "http://"), strings.TrimPrefix(node.URL, "http://"), strings.TrimPrefix(downURL, "http://"),
		":" + strconv.Itoa(portOf(t, node.URL))} {
		if strings.Contains(page, secret) || strings.Contains(string(body), secret) {
			t.Fatalf("the networks page or /v1/status shows %q", secret)
		}
	}
}

// portOf is the port of a loopback URL.
func portOf(t *testing.T, u string) int {
	t.Helper()
	i := strings.LastIndex(u, ":")
	p, err := strconv.Atoi(u[i+1:])
	if err != nil {
		t.Fatal(err)
	}
	return p
}

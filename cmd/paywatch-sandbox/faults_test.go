package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
	"github.com/paywatch/paywatch/payment"
)

// sandboxEndpoint is an endpoint as /v1/status shows it.
type sandboxEndpoint struct {
	Name  string `json:"name"`
	State string `json:"state"`
	Head  int64  `json:"head"`
	Calls int64  `json:"calls"`
	// Verifications are the large payments it confirmed as the second source.
	Verifications int64 `json:"verifications"`
}

// endpointStatus reads /v1/status: each network's endpoints by name, its
// unavailable reason, and the raw answer.
func endpointStatus(t *testing.T, ctx context.Context, env sandboxEnv) (map[string]map[string]sandboxEndpoint, map[string]string, string) {
	t.Helper()
	var st struct {
		Networks []struct {
			Network     string            `json:"network"`
			Endpoints   []sandboxEndpoint `json:"endpoints"`
			Unavailable string            `json:"unavailable_reason"`
		} `json:"networks"`
	}
	if err := apiCall(ctx, env[envURL], env[envAPIKey], http.MethodGet, "/v1/status", nil, &st); err != nil {
		t.Fatalf("status: %v", err)
	}
	eps, why := map[string]map[string]sandboxEndpoint{}, map[string]string{}
	for _, n := range st.Networks {
		eps[n.Network] = map[string]sandboxEndpoint{}
		for _, e := range n.Endpoints {
			eps[n.Network][e.Name] = e
		}
		why[n.Network] = n.Unavailable
	}
	var raw []byte
	if err := apiCall(ctx, env[envURL], env[envAPIKey], http.MethodGet, "/v1/status", nil, (*rawBody)(&raw)); err != nil {
		t.Fatalf("status: %v", err)
	}
	return eps, why, string(raw)
}

// sandboxVerification is a network's second source as /v1/status shows it.
type sandboxVerification struct {
	LargeAmountUSD string `json:"large_amount_usd"`
	Held           int64  `json:"held"`
	Disagreements  int64  `json:"disagreements"`
}

// verificationStatus reads network's verification from /v1/status.
func verificationStatus(t *testing.T, ctx context.Context, env sandboxEnv, network string) sandboxVerification {
	t.Helper()
	var st struct {
		Networks []struct {
			Network      string               `json:"network"`
			Verification *sandboxVerification `json:"verification"`
		} `json:"networks"`
	}
	if err := apiCall(ctx, env[envURL], env[envAPIKey], http.MethodGet, "/v1/status", nil, &st); err != nil {
		t.Fatalf("status: %v", err)
	}
	for _, n := range st.Networks {
		if n.Network == network && n.Verification != nil {
			return *n.Verification
		}
	}
	t.Fatalf("/v1/status has no verification for %s", network)
	return sandboxVerification{}
}

// rawBody keeps an answer as it came.
type rawBody []byte

func (r *rawBody) UnmarshalJSON(b []byte) error { *r = append((*r)[:0], b...); return nil }

// waitEndpoints waits until ok holds for network's endpoints in /v1/status.
func waitEndpoints(t *testing.T, ctx context.Context, env sandboxEnv, network, what string, ok func(map[string]sandboxEndpoint, string) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		eps, why, _ := endpointStatus(t, ctx, env)
		if ok(eps[network], why[network]) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %s not seen in 2m: endpoints %+v, unavailable %q", network, what, eps[network], why[network])
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// fault runs `paywatch-sandbox fault ARGS…` as a newcomer types it.
func fault(t *testing.T, ctx context.Context, dir string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(ctx, append(append([]string{"fault"}, args...), "--dir", dir), &out, &errb); err != nil {
		t.Fatalf("paywatch-sandbox fault %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// Issue 33 item 8: the sandbox gives every network two endpoints, the
// preferred one through the faulty proxy; `paywatch-sandbox fault NETWORK
// drop` takes it down in the running sandbox, /v1/status shows it
// unreachable while the node endpoint serves and the network stays
// available, a payment is still detected and paid (real btcd, the
// simulated Tron node), and `fault NETWORK none` brings it back; `fault
// tron 429 3` shows it throttled, not down. No node URL or credential
// appears in the status.
func TestSandboxFaultFailsOver(t *testing.T) {
	needSandboxPeers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := sandboxDir(t)
	port, err := devnet.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dev := startDev(t, ctx, dir, fmt.Sprintf("127.0.0.1:%d", port))
	env := dev.env

	eps, _, raw := endpointStatus(t, ctx, env)
	for _, n := range payment.Networks {
		if len(eps[string(n)]) != 2 || eps[string(n)][proxyEndpoint].Name == "" || eps[string(n)][nodeEndpoint].Name == "" {
			t.Fatalf("%s endpoints %+v, want %s and %s", n, eps[string(n)], proxyEndpoint, nodeEndpoint)
		}
		for _, secret := range []string{dev.sb.proxies[n].url, dev.sb.nodeURL(n), strings.TrimPrefix(dev.sb.proxies[n].url, "http://")} {
			if strings.Contains(raw, secret) {
				t.Fatalf("/v1/status shows the %s URL %s", n, secret)
			}
		}
	}
	if strings.Contains(raw, "u:p@") {
		t.Fatal("/v1/status shows node credentials")
	}

	// A large intent (large_amount_usd: 1000 in the sandbox) is paid only
	// once the endpoint that did not scan its block verifies the transfer:
	// the proxy, preferred, scans; the node verifies.
	waitEndpoints(t, ctx, env, "bitcoin", "proxy healthy", func(e map[string]sandboxEndpoint, _ string) bool {
		return e[proxyEndpoint].State == "healthy" && e[proxyEndpoint].Calls > 0
	})
	before, _, _ := endpointStatus(t, ctx, env)
	large := createIntent(t, ctx, env, payment.BTC, "1500.00")
	if _, err := payIntent(ctx, env, dir, large.ID, "", nil); err != nil {
		t.Fatalf("pay a large BTC intent: %v", err)
	}
	if got := waitPaid(t, ctx, env, large.ID, 3*time.Minute); got.ReceivedBaseUnits != large.AmountBaseUnits {
		t.Fatalf("large BTC intent: received %s, want %s", got.ReceivedBaseUnits, large.AmountBaseUnits)
	}
	after, _, _ := endpointStatus(t, ctx, env)
	verified := after["bitcoin"][nodeEndpoint].Verifications + after["bitcoin"][proxyEndpoint].Verifications -
		before["bitcoin"][nodeEndpoint].Verifications - before["bitcoin"][proxyEndpoint].Verifications
	if verified < 1 {
		t.Fatalf("large BTC intent paid with no verification by an endpoint: %+v -> %+v", before["bitcoin"], after["bitcoin"])
	}
	v := verificationStatus(t, ctx, env, "bitcoin")
	if v.LargeAmountUSD != "1000.00" || v.Held != 0 || v.Disagreements != 0 {
		t.Fatalf("bitcoin verification in /v1/status: %+v, want large_amount_usd 1000.00, nothing held or disagreeing", v)
	}
	t.Logf("large BTC intent paid after %d verification(s): %+v", verified, after["bitcoin"])

	for _, c := range []struct {
		network payment.Network
		method  payment.Method
	}{{payment.Bitcoin, payment.BTC}, {payment.Tron, payment.USDTTRC20}} {
		n := string(c.network)
		// Healthy by default, and preferred: it serves while honest.
		waitEndpoints(t, ctx, env, n, "proxy healthy", func(e map[string]sandboxEndpoint, _ string) bool {
			return e[proxyEndpoint].State == "healthy" && e[proxyEndpoint].Calls > 0
		})
		out := fault(t, ctx, dir, n, "drop")
		if !strings.Contains(out, `"drop"`) {
			t.Fatalf("fault %s drop says %q", n, out)
		}
		if list := fault(t, ctx, dir); !strings.Contains(list, n+"") || !strings.Contains(list, "proxy: drop") {
			t.Fatalf("fault list:\n%s", list)
		}
		waitEndpoints(t, ctx, env, n, "failover to the node", func(e map[string]sandboxEndpoint, why string) bool {
			return e[proxyEndpoint].State == "unreachable" && e[nodeEndpoint].State == "healthy" && why == ""
		})
		before, _, _ = endpointStatus(t, ctx, env)
		in := createIntent(t, ctx, env, c.method, "7.89")
		res, err := payIntent(ctx, env, dir, in.ID, "", nil)
		if err != nil {
			t.Fatalf("pay %s with the proxy down: %v", c.method, err)
		}
		if res.Seen != "detected" && res.Seen != "paid" {
			t.Fatalf("%s payment %s with the proxy down: seen as %q, want detected", c.method, res.TxID, res.Seen)
		}
		got := waitPaid(t, ctx, env, in.ID, 2*time.Minute)
		if got.ReceivedBaseUnits != in.AmountBaseUnits {
			t.Fatalf("%s: received %s, want %s", c.method, got.ReceivedBaseUnits, in.AmountBaseUnits)
		}
		after, _, _ = endpointStatus(t, ctx, env)
		if after[n][nodeEndpoint].Calls <= before[n][nodeEndpoint].Calls {
			t.Fatalf("%s: the node endpoint took no call while the proxy was down: %+v -> %+v", n, before[n], after[n])
		}
		if after[n][proxyEndpoint].State != "unreachable" {
			t.Fatalf("%s: proxy %+v while it drops every connection", n, after[n][proxyEndpoint])
		}
		t.Logf("%s paid through the node endpoint while the proxy was down: %+v", c.method, after[n])
		fault(t, ctx, dir, n, "none")
		waitEndpoints(t, ctx, env, n, "the proxy healthy again", func(e map[string]sandboxEndpoint, _ string) bool {
			return e[proxyEndpoint].State == "healthy"
		})
	}
	// Throttled is not down: the proxy answering 429 is backed off for its
	// Retry-After, the network stays available, and it serves again after.
	fault(t, ctx, dir, "tron", "429", "3")
	waitEndpoints(t, ctx, env, "tron", "the proxy throttled", func(e map[string]sandboxEndpoint, why string) bool {
		return e[proxyEndpoint].State == "throttled" && e[nodeEndpoint].State == "healthy" && why == ""
	})
	fault(t, ctx, dir, "tron", "off")
	waitEndpoints(t, ctx, env, "tron", "the proxy healthy after its Retry-After", func(e map[string]sandboxEndpoint, _ string) bool {
		return e[proxyEndpoint].State == "healthy"
	})
}

// Each fault kind reads into the proxy's fault; a bad one is refused with
// a message naming what is wrong.
func TestParseFault(t *testing.T) {
	for _, c := range []struct {
		args []string
		want faultyproxy.Fault
		desc string
	}{
		{[]string{"none"}, faultyproxy.Fault{}, "none"},
		{[]string{"off"}, faultyproxy.Fault{}, "none"},
		{[]string{"lag", "5"}, faultyproxy.Fault{Lag: 5}, "lag 5"},
		{[]string{"backwards"}, faultyproxy.Fault{Backwards: 1}, "backwards 1"},
		{[]string{"429"}, faultyproxy.Fault{Throttle: true, RetryAfter: 5}, "429 5"},
		{[]string{"429", "30"}, faultyproxy.Fault{Throttle: true, RetryAfter: 30}, "429 30"},
		{[]string{"503"}, faultyproxy.Fault{Unavailable: true}, "503"},
		{[]string{"DROP"}, faultyproxy.Fault{Drop: true}, "drop"},
		{[]string{"slow", "500ms"}, faultyproxy.Fault{Slow: 500 * time.Millisecond}, "slow 500ms"},
	} {
		f, desc, err := parseFault(c.args)
		if err != nil || f != c.want || desc != c.desc {
			t.Errorf("%v: %+v %q %v, want %+v %q", c.args, f, desc, err, c.want, c.desc)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "KIND is missing"},
		{[]string{"lag"}, "N (blocks) is missing"},
		{[]string{"lag", "-3"}, "whole number"},
		{[]string{"lag", "1", "2"}, "one argument at most"},
		{[]string{"503", "x"}, "takes no argument"},
		{[]string{"slow", "soon"}, "DURATION"},
		{[]string{"explode"}, `unknown KIND "explode"`},
	} {
		if _, _, err := parseFault(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error saying %q", c.args, err, c.want)
		}
	}
}

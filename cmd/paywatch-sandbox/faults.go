package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/faultyproxy"
	"github.com/paywatch/paywatch/payment"
)

// The sandbox gives each network two endpoints (issue 33 item 8): "proxy",
// preferred, is devnet/faultyproxy in front of the network's node, honest
// until `paywatch-sandbox fault` tells it to misbehave; "node" is the node
// itself. A fault on the proxy is seen as failover in the console and
// /v1/status, and payments go on being detected through "node".
const (
	// proxyEndpoint names the faulty proxy's endpoint in the config.
	proxyEndpoint = "proxy"
	// nodeEndpoint names the node's own endpoint.
	nodeEndpoint = "node"
	// envFaults is the sandbox's fault control URL in sandbox.env, which
	// `paywatch-sandbox fault` posts to.
	envFaults = "FAULTS_CONTROL_URL"
)

// faultKinds is the help text of the faults `paywatch-sandbox fault` knows.
const faultKinds = `  none | off | heal      answer honestly again
  lag N                  hide the newest N blocks (null, "out of range" or {} for them)
  backwards [HEIGHT]     answer HEIGHT (default 1) as the head once
  429 [SECONDS]          answer 429 Too Many Requests, Retry-After SECONDS (default 5)
  503                    answer 503 Service Unavailable
  drop                   close every connection without an answer
  slow [DURATION]        delay every answer (default 2s)`

// proxyKinds is the API the proxy of each network speaks.
var proxyKinds = map[payment.Network]faultyproxy.Kind{
	payment.Bitcoin: faultyproxy.Bitcoin, payment.Litecoin: faultyproxy.Bitcoin, payment.Ethereum: faultyproxy.EVM,
	payment.Tron: faultyproxy.Tron, payment.Solana: faultyproxy.Solana,
}

// sandboxProxy is one network's faulty proxy and the fault it has on.
type sandboxProxy struct {
	proxy *faultyproxy.Proxy
	// url is the proxy's endpoint URL in the config: the node's
	// credentials, the proxy's host.
	url string

	mu    sync.Mutex
	fault string // "none" when honest
}

// startProxies starts a faulty proxy, honest, before each network's node,
// and the control handler `paywatch-sandbox fault` talks to.
func (s *sandbox) startProxies() error {
	s.proxies = map[payment.Network]*sandboxProxy{}
	for _, n := range payment.Networks {
		node := s.nodeURL(n)
		p := faultyproxy.New(proxyKinds[n], node)
		u, err := url.Parse(p.URL())
		if err != nil {
			p.Close()
			return err
		}
		if nu, err := url.Parse(node); err == nil && nu.User != nil {
			// The pool sends these as basic auth; the proxy puts the node's
			// own in their place.
			u.User = nu.User
		}
		s.proxies[n] = &sandboxProxy{proxy: p, url: u.String(), fault: "none"}
	}
	port, err := s.port("faults", 0)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("fault control: %w", err)
	}
	srv := &http.Server{Handler: s.faultHandler(), ReadHeaderTimeout: 10 * time.Second}
	s.servers = append(s.servers, srv)
	s.fakeWG.Add(1)
	go func() {
		defer s.fakeWG.Done()
		_ = srv.Serve(ln)
	}()
	s.faultsURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	return nil
}

// closeProxies stops the proxies (after the daemon: it sends through them).
func (s *sandbox) closeProxies() {
	for _, p := range s.proxies {
		p.proxy.Close()
	}
}

// nodeURL is the URL of network n's sandbox node, credentials included.
func (s *sandbox) nodeURL(n payment.Network) string {
	p := s.state.Ports
	switch n {
	case payment.Bitcoin:
		return s.btcd.RPCURL
	case payment.Litecoin:
		return s.ltc.RPCURL
	case payment.Ethereum:
		return s.anvil.RPCURL
	case payment.Tron:
		return fmt.Sprintf("http://127.0.0.1:%d", p["tron"])
	case payment.Solana:
		return fmt.Sprintf("http://127.0.0.1:%d", p["solana"])
	}
	return ""
}

// configNodeURL is the URL of the node's own endpoint in a sandbox config
// (the rpc_url of a config that lists no endpoints).
func configNodeURL(nc *config.Network) string {
	for _, e := range nc.Endpoints() {
		if e.Name == nodeEndpoint {
			return e.URL
		}
	}
	return nc.RPCURL
}

// faultRequest is what `paywatch-sandbox fault` posts: the kind and its
// argument, as typed.
type faultRequest struct {
	Fault []string `json:"fault"`
}

// faultHandler serves the fault control: GET /faults lists each network's
// fault, POST /faults/{network} sets one ({"fault": ["lag", "5"]}).
func (s *sandbox) faultHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /faults", func(w http.ResponseWriter, r *http.Request) {
		out := map[string]string{}
		for n, p := range s.proxies {
			p.mu.Lock()
			out[string(n)] = p.fault
			p.mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("POST /faults/{network}", func(w http.ResponseWriter, r *http.Request) {
		p := s.proxies[payment.Network(r.PathValue("network"))]
		if p == nil {
			http.Error(w, fmt.Sprintf("network %q: want one of %s", r.PathValue("network"), networkNames()), http.StatusNotFound)
			return
		}
		var req faultRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil {
			http.Error(w, "fault: want {\"fault\": [KIND, ARG…]}", http.StatusBadRequest)
			return
		}
		f, desc, err := parseFault(req.Fault)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.proxy.Set(f)
		p.fault = desc
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"network": r.PathValue("network"), "endpoint": proxyEndpoint, "fault": desc})
	})
	return mux
}

func networkNames() string {
	names := make([]string, len(payment.Networks))
	for i, n := range payment.Networks {
		names[i] = string(n)
	}
	return strings.Join(names, ", ")
}

// parseFault reads KIND [ARG] into the proxy's fault and a description.
func parseFault(args []string) (faultyproxy.Fault, string, error) {
	if len(args) == 0 {
		return faultyproxy.Fault{}, "", errors.New("fault: KIND is missing; one of:\n" + faultKinds)
	}
	kind, rest := strings.ToLower(args[0]), args[1:]
	arg := func(def string) (string, error) {
		switch len(rest) {
		case 0:
			return def, nil
		case 1:
			return rest[0], nil
		}
		return "", fmt.Errorf("fault %s: one argument at most, got %q", kind, strings.Join(rest, " "))
	}
	positive := func(name, def string) (int64, error) {
		v, err := arg(def)
		if err != nil {
			return 0, err
		}
		if v == "" {
			return 0, fmt.Errorf("fault %s: %s is missing (e.g. `%s 5`)", kind, name, kind)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > 1_000_000 {
			return 0, fmt.Errorf("fault %s: %s must be a whole number from 1 to 1000000, got %q", kind, name, v)
		}
		return n, nil
	}
	switch kind {
	case "none", "off", "heal":
		if len(rest) > 0 {
			return faultyproxy.Fault{}, "", fmt.Errorf("fault %s takes no argument", kind)
		}
		return faultyproxy.Fault{}, "none", nil
	case "lag":
		n, err := positive("N (blocks)", "")
		return faultyproxy.Fault{Lag: n}, fmt.Sprintf("lag %d", n), err
	case "backwards":
		h, err := positive("HEIGHT", "1")
		return faultyproxy.Fault{Backwards: h}, fmt.Sprintf("backwards %d", h), err
	case "429", "throttle":
		secs, err := positive("SECONDS (Retry-After)", "5")
		return faultyproxy.Fault{Throttle: true, RetryAfter: int(secs)}, fmt.Sprintf("429 %d", secs), err
	case "503", "unavailable":
		if len(rest) > 0 {
			return faultyproxy.Fault{}, "", fmt.Errorf("fault %s takes no argument", kind)
		}
		return faultyproxy.Fault{Unavailable: true}, "503", nil
	case "drop":
		if len(rest) > 0 {
			return faultyproxy.Fault{}, "", fmt.Errorf("fault %s takes no argument", kind)
		}
		return faultyproxy.Fault{Drop: true}, "drop", nil
	case "slow":
		v, err := arg("2s")
		if err != nil {
			return faultyproxy.Fault{}, "", err
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > 10*time.Minute {
			return faultyproxy.Fault{}, "", fmt.Errorf("fault slow: DURATION must be a duration up to 10m, such as 2s, got %q", v)
		}
		return faultyproxy.Fault{Slow: d}, "slow " + d.String(), nil
	}
	return faultyproxy.Fault{}, "", fmt.Errorf("fault: unknown KIND %q; one of:\n%s", args[0], faultKinds)
}

// runFault is `paywatch-sandbox fault NETWORK KIND [ARG]`: it turns a fault
// on (or off) on the network's proxy endpoint in the running sandbox.
func runFault(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fault", "fault NETWORK KIND [ARG] [--dir DIR]\n\n"+
		"Makes the sandbox's \"proxy\" endpoint of NETWORK (the preferred one, a faulty proxy in\n"+
		"front of the network's node) misbehave as a rented provider does, while the \"node\"\n"+
		"endpoint stays honest: watch the failover in the console's Networks page or\n"+
		"GET /v1/status. With no NETWORK, lists the faults on. NETWORK is one of\n"+
		"  "+networkNames()+"\nKIND is one of\n"+faultKinds, stderr)
	dir := fs.String("dir", devDir, "sandbox directory")
	// Flags may come before or after the words.
	var words []string
	for len(args) > 0 {
		if strings.HasPrefix(args[0], "-") {
			if err := fs.Parse(args); err != nil {
				return err
			}
			args = fs.Args()
			continue
		}
		words, args = append(words, args[0]), args[1:]
	}
	env, err := readSandboxEnv(filepath.Join(*dir, "sandbox.env"))
	if err != nil {
		return err
	}
	base := env[envFaults]
	if len(words) == 0 {
		var faults map[string]string
		if err := faultCall(ctx, http.MethodGet, base+"/faults", nil, &faults); err != nil {
			return err
		}
		names := make([]string, 0, len(faults))
		for n := range faults {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(stdout, "%-9s %s: %s\n", n, proxyEndpoint, faults[n])
		}
		return nil
	}
	if len(words) < 2 {
		fs.Usage()
		return errors.New("fault needs NETWORK and KIND, e.g. `paywatch-sandbox fault tron 503`")
	}
	network := strings.ToLower(words[0])
	if !payment.Network(network).Valid() {
		return fmt.Errorf("fault: network %q: want one of %s", words[0], networkNames())
	}
	if _, _, err := parseFault(words[1:]); err != nil {
		return err
	}
	var res map[string]string
	if err := faultCall(ctx, http.MethodPost, base+"/faults/"+network, faultRequest{Fault: words[1:]}, &res); err != nil {
		return err
	}
	if res["fault"] == "none" {
		fmt.Fprintf(stdout, "%s: the %s endpoint answers honestly again; paywatch goes back to it once it has seen it healthy\n", network, proxyEndpoint)
		return nil
	}
	fmt.Fprintf(stdout, "%s: the %s endpoint now has the fault %q; watch the console's Networks page or GET /v1/status\n"+
		"  (`paywatch-sandbox fault %s none` heals it)\n", network, proxyEndpoint, res["fault"], network)
	return nil
}

// faultCall sends one request to the sandbox's fault control.
func faultCall(ctx context.Context, method, url string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("the sandbox's fault control does not answer (is the sandbox running? `make run`): %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return errors.New(strings.TrimSpace(string(b)))
	}
	return json.Unmarshal(b, out)
}

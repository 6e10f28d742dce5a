package config_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
)

// notifyYAML enables one network with a notify_url.
func notifyYAML(network, notifyURL string) string {
	y := `
database_url: postgres://u@127.0.0.1/pw
rates: {sources: [static], min_sources: 1, static: {BTC: "50000"}}
networks:
`
	switch network {
	case "bitcoin", "litecoin":
		y += "  " + network + `: {enabled: true, chain: regtest, rpc_url: "http://u:p@127.0.0.1:18443", account_key: "xpubX", notify_url: "` + notifyURL + `"}` + "\n"
	case "ethereum", "tron":
		y += "  " + network + `: {enabled: true, chain: regtest, rpc_url: "http://127.0.0.1:8545", account_key: "xpubX", notify_url: "` + notifyURL + `"}` + "\n"
	case "solana":
		y += `  solana: {enabled: true, chain: regtest, rpc_url: "http://127.0.0.1:8899", notify_url: "` + notifyURL + `"}` + "\n"
	}
	return y
}

func TestNotifyURLByNetwork(t *testing.T) {
	for _, ok := range []struct{ network, url string }{
		{"bitcoin", "tcp://127.0.0.1:28332"},
		{"litecoin", "tcp://node.internal:28333"},
		{"ethereum", "wss://mainnet.example/ws/v3/KEY"},
		{"solana", "ws://127.0.0.1:8900"},
		{"solana", ""},
	} {
		c, err := config.Parse(strings.NewReader(notifyYAML(ok.network, ok.url)), env(nil))
		if err != nil {
			t.Errorf("%s notify_url %q: %v", ok.network, ok.url, err)
			continue
		}
		if got := c.Networks[payment.Network(ok.network)].NotifyURL; got != ok.url {
			t.Errorf("%s notify_url = %q, want %q", ok.network, got, ok.url)
		}
	}
	for _, bad := range []struct{ network, url string }{
		{"bitcoin", "http://127.0.0.1:28332"},
		{"bitcoin", "tcp://127.0.0.1"},
		{"bitcoin", "tcp://u:s3cret@127.0.0.1:28332"},
		{"litecoin", "tcp://127.0.0.1:28333/x?key=s3cret"},
		{"ethereum", "https://mainnet.example/v3/s3cret"},
		{"ethereum", "ws://"},
		{"solana", "127.0.0.1:8900"},
		{"tron", "ws://127.0.0.1:8090"},
	} {
		_, err := config.Parse(strings.NewReader(notifyYAML(bad.network, bad.url)), env(nil))
		field := "networks." + bad.network + ".notify_url"
		if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s notify_url %q: err = %v, want ErrInvalid naming %s", bad.network, bad.url, err, field)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the error echoes the URL's secret: %v", err)
		}
	}
}

// TestNotifyURLFromEnvironment: a websocket URL may carry a provider's API
// key, so it can come from the environment like rpc_url.
func TestNotifyURLFromEnvironment(t *testing.T) {
	c, err := config.Parse(strings.NewReader(notifyYAML("solana", "")),
		env(map[string]string{"PAYWATCH_SOLANA_NOTIFY_URL": "wss://sol.example/?api-key=k"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Networks["solana"].NotifyURL; got != "wss://sol.example/?api-key=k" {
		t.Fatalf("notify_url = %q, want the environment's", got)
	}
	_, err = config.Parse(strings.NewReader(notifyYAML("solana", "")),
		env(map[string]string{"PAYWATCH_SOLANA_NOTIFY_URL": "ws://h:1/\r\nX: y"}))
	if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "networks.solana.notify_url") {
		t.Fatalf("a notify URL with CR LF from the environment: err = %v, want ErrInvalid naming the field", err)
	}
}

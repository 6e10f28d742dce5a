package config_test

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/config"
)

// providerDocBase is what a YAML example of docs/providers.md is parsed
// after: the settings the example leaves out (and each network but Solana
// is given ownKey as its account_key).
const providerDocBase = `
database_url: postgres://u@127.0.0.1/pw
rates: {sources: [coinbase, kraken], min_sources: 1}
`

// Issue 33 item 9: every YAML example of the operator's guide to
// providers is valid configuration (config.Parse, with the variables its
// api_key_env and headers_env name set), so an example that drifts from
// the configuration fails here.
func TestProviderDocExamplesParse(t *testing.T) {
	b, err := os.ReadFile("../docs/providers.md")
	if err != nil {
		t.Fatal(err)
	}
	envName := regexp.MustCompile(`(?m)^\s*(api_key_env|headers_env):\s*([A-Z0-9_]+)`)
	var blocks []string
	var line []int
	var cur *strings.Builder
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case cur != nil && strings.HasPrefix(l, "```"):
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(l + "\n")
		case strings.HasPrefix(l, "```yaml"):
			cur = &strings.Builder{}
			line = append(line, n)
		}
	}
	if len(blocks) < 4 {
		t.Fatalf("docs/providers.md: %d YAML examples, want one per network kind (at least 4)", len(blocks))
	}
	for i, y := range blocks {
		vars := map[string]string{}
		for _, m := range envName.FindAllStringSubmatch(y, -1) {
			if m[1] == "headers_env" {
				vars[m[2]] = "Authorization: Basic dTpw"
			} else {
				vars[m[2]] = "k"
			}
		}
		if !strings.Contains(y, "  solana:") {
			y = strings.Replace(y, "    enabled: true\n", "    enabled: true\n    account_key: "+ownKey+"\n", 1)
		}
		c, err := config.Parse(strings.NewReader(providerDocBase+y), env(vars))
		if err != nil {
			t.Errorf("docs/providers.md:%d: %v", line[i], err)
			continue
		}
		pooled := 0
		for _, n := range c.Networks {
			if n.Enabled && len(n.EndpointList) >= 2 {
				pooled++
			}
		}
		if pooled != 1 {
			t.Errorf("docs/providers.md:%d: want one enabled network with two endpoints or more, got %d", line[i], pooled)
		}
	}
}

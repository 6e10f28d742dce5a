package main

import (
	"os/exec"
	"strings"
	"testing"
)

// linksSandbox reports why the daemon must not link package path: the test
// harness, the simulated nodes, the sandbox, devnet (node installers,
// process control, well-known test keys) or the conformance suite.
func linksSandbox(path string) (string, bool) {
	const module = "github.com/paywatch/paywatch/"
	switch {
	case path == "testing" || strings.HasPrefix(path, "testing/"):
		return "the test harness", true
	case !strings.HasPrefix(path, module):
		return "", false
	}
	own := strings.TrimPrefix(path, module)
	for _, bad := range []string{"fake", "sandbox", "devnet", "chainstest"} {
		if strings.Contains(own, bad) {
			return "sandbox or test code (" + bad + ")", true
		}
	}
	return "", false
}

// The paywatch binary is only the daemon: `go list -deps ./cmd/paywatch`
// holds no testing package, no simulated node, no sandbox, no devnet and no
// chainstest (they live in cmd/paywatch-sandbox and the tests).
func TestDaemonLinksNoSandbox(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/paywatch/paywatch/cmd/paywatch").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list -deps: %v\n%s", err, stderr)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 || !contains(deps, "github.com/paywatch/paywatch/api") {
		t.Fatalf("go list -deps gave %d packages without the API: %q", len(deps), out)
	}
	for _, p := range deps {
		if why, bad := linksSandbox(p); bad {
			t.Errorf("the daemon links %s: %s", p, why)
		}
	}
}

// The check itself names what it must refuse, and lets the daemon's own
// packages and look-alike names through.
func TestLinksSandboxNamesTheOffenders(t *testing.T) {
	for p, want := range map[string]bool{
		"testing":        true,
		"testing/fstest": true,
		"github.com/paywatch/paywatch/chains/tron/tronfake":     true,
		"github.com/paywatch/paywatch/chains/solana/solanafake": true,
		"github.com/paywatch/paywatch/chains/chainstest":        true,
		"github.com/paywatch/paywatch/devnet":                   true,
		"github.com/paywatch/paywatch/devnet/devnettest":        true,
		"github.com/paywatch/paywatch/cmd/paywatch-sandbox":     true,
		"github.com/paywatch/paywatch/api":                      false,
		"github.com/paywatch/paywatch/chains/tron":              false,
		"github.com/mitchellh/go-testing-interface":             false,
		"internal/testlog":                                      false,
	} {
		if _, got := linksSandbox(p); got != want {
			t.Errorf("linksSandbox(%s) = %v, want %v", p, got, want)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

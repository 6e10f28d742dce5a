package main

import (
	"os"
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

// The two cgo secp256k1 libraries define the same C symbols, so a binary
// linking both fails to link without a build tag.
const (
	ethSecp256k1 = "github.com/ethereum/go-ethereum/crypto/secp256k1"
	ltcSecp256k1 = "github.com/ltcsuite/secp256k1"
)

// Plain Go tooling works: no package of the module, and no test binary,
// links both go-ethereum's cgo secp256k1 and ltcd's, so `go build ./...`
// and `go test ./...` need no build tag.
func TestNoBinaryLinksBothSecp256k1(t *testing.T) {
	// Plain flags, whatever GOFLAGS the tests run with: a build tag such as
	// gofuzz would hide go-ethereum's cgo copy.
	plain := func(args ...string) *exec.Cmd {
		c := exec.Command("go", args...)
		c.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
		return c
	}
	out, err := plain("list", "-test", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "github.com/paywatch/paywatch/...").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list -test: %v\n%s", err, stderr)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasSuffix(fields[0], ".test") {
			continue // only linked binaries matter: commands are checked as their tests' deps and below
		}
		checked++
		if deps := fields[1:]; contains(deps, ethSecp256k1) && contains(deps, ltcSecp256k1) {
			t.Errorf("%s links both %s and %s", fields[0], ethSecp256k1, ltcSecp256k1)
		}
	}
	if checked < 10 {
		t.Fatalf("only %d test binaries listed: %q", checked, out)
	}
	cmds, err := plain("list", "github.com/paywatch/paywatch/cmd/...").Output()
	if err != nil || !strings.Contains(string(cmds), "cmd/paywatch-sandbox") {
		t.Fatalf("go list cmd/...: %v %q", err, cmds)
	}
	for _, cmd := range strings.Fields(string(cmds)) {
		out, err := plain("list", "-deps", cmd).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", cmd, err)
		}
		if deps := strings.Fields(string(out)); contains(deps, ethSecp256k1) && contains(deps, ltcSecp256k1) {
			t.Errorf("%s links both %s and %s", cmd, ethSecp256k1, ltcSecp256k1)
		}
	}
}

// The daemon links no pre-release of a module (v1.0.0-rc.1 and the like):
// a release candidate carries no promise of its API or of fixes, and
// filippo.io/edwards25519 v1.0.0-rc.1 came in through solana-go until
// v1.2.0 was required (issue 34). Pseudo-versions of untagged modules
// (v0.0.0-20240101…-abcdef) are not pre-releases of a release and pass.
func TestDaemonLinksNoPreRelease(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}",
		"github.com/paywatch/paywatch/cmd/paywatch").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, version, ok := strings.Cut(line, " ")
		if !ok || seen[path] {
			continue
		}
		seen[path] = true
		if preRelease(version) {
			t.Errorf("the daemon links %s %s, a pre-release", path, version)
		}
	}
	if !seen["github.com/gagliardetto/solana-go"] {
		t.Fatalf("go list -deps names no solana-go among %d modules: %q", len(seen), out)
	}
}

// preRelease reports whether a module version is a pre-release of a tagged
// release (v1.0.0-rc.1, v2.3.0-beta), not a pseudo-version.
func preRelease(v string) bool {
	_, pre, ok := strings.Cut(strings.TrimPrefix(v, "v"), "-")
	if !ok {
		return false
	}
	// A pseudo-version's tail is a 14-digit timestamp and a commit hash,
	// after "0." or directly (v0.0.0-20240101000000-abcdef123456).
	parts := strings.Split(pre, "-")
	if len(parts) >= 2 {
		ts := parts[len(parts)-2]
		ts = ts[strings.LastIndex(ts, ".")+1:]
		if len(ts) == 14 && strings.Trim(ts, "0123456789") == "" {
			return false
		}
	}
	return true
}

func TestPreReleaseTellsReleaseCandidatesFromPseudoVersions(t *testing.T) {
	for v, want := range map[string]bool{
		"v1.0.0-rc.1":                          true,
		"v2.3.0-beta":                          true,
		"v1.2.0":                               false,
		"v0.0.0-20240101000000-abcdef123456":   false,
		"v1.2.4-0.20240101000000-abcdef123456": false,
		"v0.0.0-20161212061736-f391b8402d23":   false,
		"":                                     false,
	} {
		if got := preRelease(v); got != want {
			t.Errorf("preRelease(%q) = %v, want %v", v, got, want)
		}
	}
}

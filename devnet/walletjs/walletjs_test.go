package walletjs

import (
	"os"
	"strings"
	"testing"
)

// .ci/run installs exactly the versions Find requires.
func TestCIInstallsThePinnedVersions(t *testing.T) {
	b, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "wallet_pkgs=(") {
			line = l
		}
	}
	if line == "" {
		t.Fatal(".ci/run has no wallet_pkgs=( line")
	}
	got := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(line, "wallet_pkgs=("), ")"))
	if len(got) != len(Packages) {
		t.Fatalf(".ci/run installs %v, want %d packages", got, len(Packages))
	}
	for i, p := range Packages {
		if got[i] != p.Spec() {
			t.Errorf(".ci/run installs %s, Find wants %s", got[i], p.Spec())
		}
	}
}

package main

import (
	"strings"
	"testing"
)

// The banner offers the example order's payment page and the command that
// pays it; without an example it offers neither.
func TestBannerShowsTheExamplePage(t *testing.T) {
	ex := example{ID: "pi_01JD3K7W9ZC8X5Q2R4T6V8Y0AB", Reference: "ORD-EXAMPLE-1", Method: "BTC", Amount: "0.00041667 BTC",
		PageURL: "http://127.0.0.1:8080/pay/mR8cY0Jk2VbXw3aQ7nLp4sT9eZ1hU6dG5fK0oI2jN8A"}
	var b strings.Builder
	printBanner(&b, &sandbox{env: sandboxEnv{envURL: "http://127.0.0.1:8080"}, relDir: ".paywatch"}, sandboxReady{Example: ex}, 0)
	out := b.String()
	for _, want := range []string{"  " + ex.PageURL + "\n", "bin/paywatch-sandbox pay " + ex.ID, "ORD-EXAMPLE-1 (25.00 USD = 0.00041667 BTC)"} {
		if !strings.Contains(out, want) {
			t.Errorf("banner lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	printBanner(&b, &sandbox{env: sandboxEnv{envURL: "http://127.0.0.1:8080"}, relDir: ".paywatch"}, sandboxReady{}, 0)
	if strings.Contains(b.String(), "/pay/") || strings.Contains(b.String(), "example order") {
		t.Errorf("banner without an example:\n%s", b.String())
	}
}

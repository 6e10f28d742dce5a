package checkout

import (
	"regexp"
	"slices"
	"testing"
)

var placeholder = regexp.MustCompile(`\{[a-z]+\}`)

// Every language has every message, with the same placeholders, and
// nothing else.
func TestCatalogueIsComplete(t *testing.T) {
	en := catalogue["en"]
	for tag, msgs := range catalogue {
		for k, v := range en {
			got, ok := msgs[k]
			if !ok {
				t.Errorf("%s lacks %q", tag, k)
				continue
			}
			a, b := placeholder.FindAllString(v, -1), placeholder.FindAllString(got, -1)
			slices.Sort(a)
			slices.Sort(b)
			if !slices.Equal(slices.Compact(a), slices.Compact(b)) {
				t.Errorf("%s %q has placeholders %v, English %v", tag, k, b, a)
			}
		}
		for k := range msgs {
			if _, ok := en[k]; !ok {
				t.Errorf("%s has %q, which English lacks", tag, k)
			}
		}
	}
	if len(keys()) != len(en) {
		t.Fatal("keys")
	}
}

func TestLangOf(t *testing.T) {
	cases := []struct{ explicit, accept, want string }{
		{"", "", "en"},
		{"", "de-DE,de;q=0.9,en;q=0.8", "de"},
		{"", "de-AT", "de"},
		{"", "fr-FR,fr;q=0.9,de;q=0.5", "de"},
		{"", "fr-FR", "en"},
		{"", "en-GB,de;q=0.9", "en"},
		{"", "*", "en"},
		{"", "\x00garbage;;q=", "en"},
		{"de", "en", "de"},
		{"xx", "de", "de"},
		{"DE", "", "en"},
	}
	for _, c := range cases {
		if got := LangOf(c.explicit, c.accept).Tag; got != c.want {
			t.Errorf("LangOf(%q, %q) = %s, want %s", c.explicit, c.accept, got, c.want)
		}
	}
}

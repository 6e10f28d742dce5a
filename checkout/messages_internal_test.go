package checkout

import (
	"regexp"
	"slices"
	"testing"
	"time"
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
		{"", "fr-FR,fr;q=0.9,de;q=0.5", "fr"},
		{"", "fr-FR", "fr"},
		{"", "fr-CA", "fr"},
		{"", "id-ID,id;q=0.9,en;q=0.8", "id"},
		{"", "in", "id"},    // the old code of Indonesian
		{"", "ms-MY", "id"}, // Malay readers read Indonesian (CLDR's match)
		{"", "ja-JP", "en"},
		{"", "it-IT,fr;q=0.5", "fr"},
		{"fr", "de", "fr"},
		{"id", "", "id"},
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

// The catalogue's languages are the four the page speaks, each complete
// (TestCatalogueIsComplete), none of its words left in English by
// mistake: every message of French and Indonesian differs from English
// but for names that are the same in every language.
func TestEveryLanguageIsTranslated(t *testing.T) {
	var tags []string
	for _, l := range Languages() {
		tags = append(tags, l.Tag)
	}
	if !slices.Equal(tags, []string{"en", "de", "fr", "id"}) {
		t.Fatalf("languages %v", tags)
	}
	same := map[string]bool{"page.total": true, "method.BTC": true, "method.LTC": true, "receipt.tx": true,
		"receipt.confirmations": true, "duration.hm": true, "duration.m": true}
	for _, tag := range []string{"fr", "id"} {
		for k, v := range catalogue[tag] {
			if v == catalogue["en"][k] && !same[k] {
				t.Errorf("%s %q is the English text %q", tag, k, v)
			}
		}
	}
	for _, tag := range tags {
		if err := CheckLocale(tag); err != nil {
			t.Errorf("CheckLocale(%q) = %v", tag, err)
		}
	}
	for _, bad := range []string{"", "FR", "fr-FR", "es", "english", "id "} {
		if CheckLocale(bad) == nil {
			t.Errorf("CheckLocale(%q) accepted", bad)
		}
	}
}

// Numbers, amounts and dates in each language's way; an amount in a coin
// keeps every digit, only its decimal mark changes.
func TestLocaleFormats(t *testing.T) {
	at := time.Date(2026, 12, 6, 9, 5, 0, 0, time.FixedZone("WIB", 7*3600))
	cases := []struct {
		tag, usd, coin, time string
	}{
		{"en", "1,234,567.50", "0.000123450", "6 December 2026, 02:05 UTC"},
		{"de", "1.234.567,50", "0,000123450", "6. Dezember 2026, 02:05 UTC"},
		{"fr", "1\u202f234\u202f567,50", "0,000123450", "6 décembre 2026 à 02:05 UTC"},
		{"id", "1.234.567,50", "0,000123450", "6 Desember 2026, pukul 02.05 UTC"},
	}
	for _, c := range cases {
		l := LangOf(c.tag, "")
		if got := l.USD("1234567.50"); got != c.usd {
			t.Errorf("%s USD = %q, want %q", c.tag, got, c.usd)
		}
		if got := l.Decimal("0.000123450"); got != c.coin {
			t.Errorf("%s Decimal = %q, want %q", c.tag, got, c.coin)
		}
		if got := l.Time(at); got != c.time {
			t.Errorf("%s Time = %q, want %q", c.tag, got, c.time)
		}
	}
	if got := LangOf("en", "").USD("999.99"); got != "999.99" {
		t.Errorf("USD(999.99) = %q", got)
	}
}

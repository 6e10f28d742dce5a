package checkout_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/api"
	"github.com/paywatch/paywatch/checkout"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// Account keys of seeds no wallet holds (sha256("paywatch store test a"),
// "b"), m/84'/1'/0'.
const (
	storeKeyA = "tpubDCSQ2aMyQRi9dBGxoG8Xx3FR93fHonMfvRCc8xtW97iD1FyZQxtEeLiasgr2RgpBbofCRZvkJTyjEcoD3K8isLrA49yPYCYYVVmkchmcBrz"
	storeKeyB = "tpubDCM3fYoVu75K7pyQkiBKWjbkFAseES1vDrSxKRKFKQCUzWVVXi647rqXMuDMW8TM8rza6jM4NNKbfJ9fc4kVr1DQTPAF9uGBR553JbwEnwU"
)

// storesSite is a site with two stores beside the default one ("Example
// Shop"): Alpha (green, English and German, its own return host, a logo)
// and Beta (brown, French only, the page's return hosts).
func storesSite(t *testing.T) *site {
	t.Helper()
	return newSite(t, siteOptions{env: []paywatchtest.Option{paywatchtest.WithConfig(func(c *config.Config) {
		c.Stores = []config.Store{
			{ID: "alpha", Name: "Alpha (internal)", DisplayName: "Alpha GPUs", Colour: "#0B6E4F", Languages: []string{"en", "de"},
				ReturnHosts: []string{"alpha.example.com"}, LogoURL: "https://cdn.alpha.example.com/logo.png",
				Networks: map[payment.Network]config.StoreNetwork{payment.Bitcoin: {AccountKey: storeKeyA}}},
			{ID: "beta", Name: "Beta (internal)", DisplayName: "Beta Render Farm", Colour: "#7c2d12", Languages: []string{"fr"},
				Networks: map[payment.Network]config.StoreNetwork{payment.Bitcoin: {AccountKey: storeKeyB}}},
		}
	})}})
}

// createIn creates an order in a store; it returns the status and, on 201,
// the intent.
func (s *site) createIn(t *testing.T, shop, ref string, extra map[string]string) (int, views.Intent, string) {
	t.Helper()
	body := map[string]string{"kind": "order", "reference": ref, "amount_usd": "25.00", "method": "BTC"}
	for k, v := range extra {
		body[k] = v
	}
	status, raw := s.Do("POST", "/v1/intents", "storefront", body, api.StoreHeader, shop)
	var v views.Intent
	if status == 201 {
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
	}
	return status, v, string(raw)
}

// A store's return_url must name one of its return hosts (else the
// page's), and its locale one of its languages.
func TestStoresReturnHostsAndLanguages(t *testing.T) {
	s := storesSite(t)
	for _, c := range []struct {
		shop  string
		extra map[string]string
		ok    bool
		field string
	}{
		{"alpha", map[string]string{"return_url": "https://alpha.example.com/orders/1"}, true, ""},
		{"alpha", map[string]string{"return_url": "https://shop.example.com/orders/1"}, false, "return_url"},
		{"beta", map[string]string{"return_url": "https://shop.example.com/orders/1"}, true, ""},
		{"beta", map[string]string{"return_url": "https://alpha.example.com/orders/1"}, false, "return_url"},
		{"alpha", map[string]string{"locale": "de"}, true, ""},
		{"alpha", map[string]string{"locale": "fr"}, false, "locale"},
		{"beta", map[string]string{"locale": "fr"}, true, ""},
		{"beta", map[string]string{"locale": "en"}, false, "locale"},
		{"", map[string]string{"locale": "id", "return_url": "https://x.shop.example.org/"}, true, ""},
	} {
		status, _, body := s.createIn(t, c.shop, "ORD-"+c.shop+"-"+c.extra["locale"]+c.extra["return_url"], c.extra)
		if c.ok != (status == 201) || (!c.ok && !strings.Contains(body, `"message":"`+c.field+` `)) {
			t.Errorf("%s %v: %d %s", c.shop, c.extra, status, body)
		}
		if strings.Contains(body, "Alpha") || strings.Contains(body, "Beta") {
			t.Errorf("an answer names a store's look: %s", body)
		}
	}
}

// Each store's page has its look and names no other store: its display
// name, logo and colour (allowed by the page's CSP), only its languages;
// the default store's page is as before.
func TestStoresPagesHaveTheirOwnLook(t *testing.T) {
	s := storesSite(t)
	_, a, _ := s.createIn(t, "alpha", "ORD-1", nil)
	_, b, _ := s.createIn(t, "beta", "ORD-1", nil)
	d := s.create(t, "ORD-1", "25.00", nil)
	pages := map[string]string{"alpha": s.pageOf(t, a), "beta": s.pageOf(t, b), "default": s.pageOf(t, d)}
	for shop, path := range pages {
		resp, body := s.get(t, path, "Accept-Language", "de-DE,de;q=0.9,en;q=0.5")
		if resp.StatusCode != 200 {
			t.Fatalf("%s's page: %d", shop, resp.StatusCode)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		lang := resp.Header.Get("Content-Language")
		names := map[string]string{"alpha": "Alpha GPUs", "beta": "Beta Render Farm", "default": "Example Shop"}
		for other, name := range names {
			if (other == shop) != strings.Contains(body, name) {
				t.Errorf("%s's page and %q: shown %v", shop, name, strings.Contains(body, name))
			}
		}
		if strings.Contains(body, "internal") {
			t.Errorf("%s's page shows a store's operator name", shop)
		}
		switch shop {
		case "alpha":
			if lang != "de" || !strings.Contains(body, `hreflang="en"`) || strings.Contains(body, `hreflang="fr"`) ||
				!strings.Contains(body, `<style>:root{--shop:#0b6e4f}</style>`) || !strings.Contains(csp, "style-src 'self' 'sha256-") ||
				!strings.Contains(body, `src="https://cdn.alpha.example.com/logo.png"`) || !strings.Contains(csp, "img-src 'self' https://cdn.alpha.example.com;") {
				t.Errorf("alpha's page: %s, CSP %q\n%s", lang, csp, body)
			}
		case "beta":
			if lang != "fr" || strings.Contains(body, `hreflang="en"`) || strings.Contains(body, `hreflang="de"`) || strings.Contains(body, `id="logo"`) ||
				!strings.Contains(body, `--shop:#7c2d12`) || strings.Contains(csp, "https://") {
				t.Errorf("beta's page: %s, CSP %q\n%s", lang, csp, body)
			}
			// A language the store does not offer is not served.
			if resp, _ := s.get(t, path+"?lang=en"); resp.Header.Get("Content-Language") != "fr" {
				t.Errorf("beta's page in English: %s", resp.Header.Get("Content-Language"))
			}
		case "default":
			if lang != "de" || !strings.Contains(body, `hreflang="fr"`) || strings.Contains(body, "<style>") ||
				csp != "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'" {
				t.Errorf("the default store's page changed: %s, CSP %q", lang, csp)
			}
		}
	}
	// An unknown link's page is the same whatever stores exist.
	_, unknown := s.get(t, "/pay/"+strings.Repeat("A", len(strings.TrimPrefix(pages["alpha"], "/pay/"))))
	for _, name := range []string{"Alpha", "Beta", "alpha", "beta"} {
		if strings.Contains(unknown, name) {
			t.Errorf("the unknown link's page names %q", name)
		}
	}
}

// In a browser, two stores' pages look different (their colour band) and
// neither shows the other's name.
func TestChromiumStoresPagesLookDifferent(t *testing.T) {
	s := storesSite(t)
	_, a, _ := s.createIn(t, "alpha", "ORD-7", nil)
	_, b, _ := s.createIn(t, "beta", "ORD-7", nil)
	ctx := browser(t, phone)
	dir := shotDir(t)
	band := map[string]string{}
	for _, c := range []struct {
		shop, path, name, other string
	}{{"alpha", s.pageOf(t, a), "Alpha GPUs", "Beta Render Farm"}, {"beta", s.pageOf(t, b), "Beta Render Farm", "Alpha GPUs"}} {
		if st := open(t, ctx, s.URL+c.path); st != 200 {
			t.Fatalf("%s's page: %d", c.shop, st)
		}
		if got := text(t, ctx, "#shop"); got != c.name {
			t.Errorf("%s's page says the shop is %q", c.shop, got)
		}
		if eval[bool](t, ctx, `document.body.innerText.includes(`+jsString(c.other)+`) || document.title.includes(`+jsString(c.other)+`)`) {
			t.Errorf("%s's page shows %q", c.shop, c.other)
		}
		band[c.shop] = eval[string](t, ctx, `getComputedStyle(document.querySelector('header')).borderTopColor`)
		shoot(t, ctx, dir, "store-"+c.shop)
	}
	if band["alpha"] != "rgb(11, 110, 79)" || band["beta"] != "rgb(124, 45, 18)" {
		t.Fatalf("the stores' colour bands: %v (the CSP must allow the inline style)", band)
	}
}

func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }

// The config checks a store's languages against the page's catalogue.
func TestConfigKnowsThePageLanguages(t *testing.T) {
	var tags []string
	for _, l := range checkout.Languages() {
		tags = append(tags, l.Tag)
	}
	if strings.Join(tags, ",") != strings.Join(config.PageLanguages, ",") {
		t.Fatalf("config.PageLanguages %v, the catalogue %v", config.PageLanguages, tags)
	}
}

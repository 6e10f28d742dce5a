package checkout_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// screenshots is where the Chromium tests write their screenshots; empty
// means a temporary directory. `go test ./checkout -run Chromium -args
// -screenshots $PWD/docs/checkout` (from the repository root) refreshes the
// committed ones.
var screenshots = flag.String("screenshots", "", "directory for payment page screenshots (default: a temp dir)")

// phone and desktop are the widths the page is tested at, and height
// the window's height (a phone's first screen: 390 × 844).
const (
	phone   = 390
	desktop = 1280
	height  = 844
)

func findChromium() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", nil
	}
	return "", errors.New("no chromium on the PATH (Debian: apt-get install chromium)")
}

// browser starts a headless Chromium (a missing one fails under CI) with a
// window width×height and the given extra flags, and returns a tab.
func browser(t *testing.T, width int, flags ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	path, err := findChromium()
	devnettest.Need(t, "Chromium", err)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(width, height), chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()))
	opts = append(opts, flags...)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	ctx, cancelTime := context.WithTimeout(ctx, 8*time.Minute) // a safety net on a loaded machine, not a wait
	t.Cleanup(cancelTime)
	devnettest.Need(t, "Chromium", chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), height)))
	return ctx
}

func shotDir(t *testing.T) string {
	t.Helper()
	if *screenshots != "" {
		if err := os.MkdirAll(*screenshots, 0o755); err != nil {
			t.Fatal(err)
		}
		return *screenshots
	}
	return t.TempDir()
}

// shoot writes a full-page PNG screenshot.
func shoot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if len(png) < 1000 {
		t.Fatalf("screenshot %s: %d bytes", name, len(png))
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// js runs a script for its effect.
func js(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[any](expr)(ctx, tg)
		return err
	})
}

func mustJSON(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

// open navigates and returns the HTTP status of the page.
func open(t *testing.T, ctx context.Context, url string) int {
	t.Helper()
	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(url))
	if err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	return int(resp.Status)
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitFor waits until a script condition holds in the page (checked every
// 20 ms, never a fixed sleep).
func waitFor(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	if !eval[bool](t, ctx, `new Promise(r => { const f = () => (`+cond+`) ? r(true) : setTimeout(f, 20); f(); })`) {
		t.Fatalf("condition %s", cond)
	}
}

// stateIs is the page condition of a live state.
func stateIs(state string) string { return `document.body.dataset.state === "` + state + `"` }

// noReload marks the page; reloaded reports whether the mark is gone.
const mark, marked = `window.__marker = 1`, `window.__marker === 1`

// checkA11y runs a basic accessibility check of the page: a language, one
// h1, every control and link named, every image named, the focus visible
// on every control reached with Tab, and text contrast of at least 4.5:1.
func checkA11y(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	problems := eval[[]string](t, ctx, `(() => {
	  const out = [];
	  if (!document.documentElement.lang) out.push('no lang');
	  if (document.querySelectorAll('h1').length !== 1) out.push('h1 count');
	  const named = el => (el.getAttribute('aria-label') || el.textContent || el.getAttribute('title') || '').trim() !== '' ||
	    (el.id && document.querySelector('label[for="' + el.id + '"]'));
	  for (const el of document.querySelectorAll('a, button, input, select, textarea')) {
	    if (el.closest('[hidden]') || el.hidden) continue;
	    if (!named(el)) out.push('unnamed ' + el.outerHTML.slice(0, 80));
	  }
	  for (const el of document.querySelectorAll('img, svg')) {
	    if (!el.getAttribute('alt') && !el.getAttribute('aria-label')) out.push('unnamed image');
	  }
	  const rgb = s => (s.match(/[\d.]+/g) || []).map(Number);
	  const lum = c => { const [r, g, b] = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
	  const bg = el => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c; } return [255, 255, 255]; };
	  for (const el of document.querySelectorAll('body *')) {
	    if (el.closest('[hidden]') || el.closest('svg') || el.offsetParent === null) continue;
	    const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim() !== '');
	    if (!own) continue;
	    const a = lum(rgb(getComputedStyle(el).color)), b = lum(bg(el));
	    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
	    if (ratio < 4.5) out.push('contrast ' + ratio.toFixed(2) + ' ' + el.tagName + ' ' + el.textContent.trim().slice(0, 40));
	  }
	  return out;
	})()`)
	if len(problems) > 0 {
		t.Errorf("%s: accessibility: %v", what, problems)
	}
	// The focus ring: Tab through the controls.
	n := eval[int](t, ctx, `Array.from(document.querySelectorAll('a, button')).filter(e => !e.closest('[hidden]') && !e.hidden).length`)
	run(t, ctx, js(`document.activeElement && document.activeElement.blur()`))
	for i := 0; i < n; i++ {
		run(t, ctx, chromedp.KeyEvent("\t"))
		if s := eval[string](t, ctx, `(() => { const e = document.activeElement; if (!e || e === document.body) return 'body';
		  const st = getComputedStyle(e); return st.outlineStyle === 'none' || parseFloat(st.outlineWidth) < 2 ? e.outerHTML.slice(0, 60) : ''; })()`); s != "" && s != "body" {
			t.Errorf("%s: no visible focus on %s", what, s)
		}
	}
	run(t, ctx, js(`document.activeElement && document.activeElement.blur()`))
	if over := eval[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth + 1`); over {
		t.Errorf("%s: the page scrolls sideways at %d px", what, eval[int](t, ctx, `window.innerWidth`))
	}
}

// The storefront's customer on a phone: the page shows what to pay, copy
// works, the countdown runs; half is paid and the page says exactly what is
// missing, without a reload, within 2 s of the decision; the rest is seen
// (0 of 2, then 1 of 2 confirmations), then paid with the return button.
// Phone and desktop screenshots of each state.
func TestChromiumPhonePayHalfThenRest(t *testing.T) {
	s := newSite(t, siteOptions{})
	dir := shotDir(t)
	btc := payment.Bitcoin
	in := s.create(t, "ORD-2026-0042", "25.00", map[string]string{"return_url": "https://shop.example.com/orders/ORD-2026-0042"})
	url := s.URL + s.pageOf(t, in)
	ctx := browser(t, phone)
	if st := open(t, ctx, url); st != 200 {
		t.Fatalf("page: %d", st)
	}
	waitFor(t, ctx, `document.body.dataset.connected === "1"`)
	amount := payment.TrimUnits(paywatchtest.Units(in.AmountBaseUnits), 8)
	for sel, want := range map[string]string{"#amount": amount, "#address": in.Address, "#symbol": "BTC", "#usd": "25.00 USD",
		"#what": "Order ORD-2026-0042", "#shop": "Example Shop", "#method": "Bitcoin (BTC)", "#state-title": "Waiting for your payment"} {
		if got := text(t, ctx, sel); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	if w := text(t, ctx, "#warning"); !strings.Contains(w, "Only bitcoin (BTC) on the Bitcoin network") || !strings.Contains(w, "lost") {
		t.Errorf("warning %q", w)
	}
	if r := text(t, ctx, "#rate"); r != "Rate: 1 BTC = 50000 USD, locked until the deadline." {
		t.Errorf("rate %q", r)
	}
	if href := eval[string](t, ctx, `document.getElementById('wallet').getAttribute('href')`); href != in.PaymentURI {
		t.Errorf("wallet link %q, want the payment URI %q", href, in.PaymentURI)
	}
	if cells := eval[int](t, ctx, `document.querySelector('#qr path').getAttribute('d').split('M').length - 1`); cells < 100 {
		t.Errorf("QR code of %d runs", cells)
	}
	// The countdown counts in the server's time (the test clock: 30 min).
	if c := text(t, ctx, "#countdown"); !regexp.MustCompile(`^(30:00|29:[0-5]\d) left$`).MatchString(c) {
		t.Errorf("countdown %q", c)
	}
	shoot(t, ctx, dir, "waiting-phone")
	run(t, ctx, chromedp.EmulateViewport(desktop, height))
	shoot(t, ctx, dir, "waiting-desktop")
	run(t, ctx, chromedp.EmulateViewport(phone, height))
	checkA11y(t, ctx, "waiting")
	// Copy: the button copies exactly the amount.
	if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
		Permission: &cdpbrowser.PermissionDescriptor{Name: "clipboard-read"}, Setting: cdpbrowser.PermissionSettingGranted}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
		Permission: &cdpbrowser.PermissionDescriptor{Name: "clipboard-write"}, Setting: cdpbrowser.PermissionSettingGranted}); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`button[data-copy="amount"]`)))
	waitFor(t, ctx, `document.querySelector('button[data-copy="amount"]').textContent === "Copied"`)
	if got := eval[string](t, ctx, `navigator.clipboard.readText()`); got != amount {
		t.Fatalf("copied %q, want %q", got, amount)
	}
	run(t, ctx, chromedp.Click(chromedp.CSS(`button[data-copy="address"]`)))
	waitFor(t, ctx, `document.querySelector('button[data-copy="address"]').textContent === "Copied"`)
	if got := eval[string](t, ctx, `navigator.clipboard.readText()`); got != in.Address {
		t.Fatalf("copied %q, want %q", got, in.Address)
	}
	run(t, ctx, js(mark))

	// Half: underpaid, the exact rest, within 2 s of the decision.
	part := half(in)
	s.Pay(in, payment.Native, part, "chromium-half")
	s.Sync(btc) // the decision is committed when Sync returns
	decided := time.Now()
	missing := payment.TrimUnits(rest(in, part), 8)
	waitFor(t, ctx, stateIs("underpaid"))
	took := time.Since(decided)
	t.Logf("decision -> underpaid on screen: %s", took)
	// The bound for this step (the benchmark measures the p95).
	if took > 2*time.Second {
		t.Errorf("the page showed the underpayment %s after the decision; the bound is 2 s", took)
	}
	if got := text(t, ctx, "#status"); !strings.Contains(got, missing+" BTC is still missing") || !strings.Contains(got, "Send the missing "+missing+" BTC to the same address before the deadline") {
		t.Fatalf("underpaid says %q", got)
	}
	if hidden := eval[bool](t, ctx, `document.getElementById('pay').hidden`); hidden {
		t.Fatal("the instructions are hidden while the rest may still be paid")
	}
	// The instructions now ask for the rest: its amount, QR code and wallet
	// link, and the copy button copies it.
	if got := text(t, ctx, "#amount"); got != missing {
		t.Fatalf("the instructions ask for %q, want the rest %q", got, missing)
	}
	if href := eval[string](t, ctx, `document.getElementById('wallet').getAttribute('href')`); href != "bitcoin:"+in.Address+"?amount="+missing {
		t.Fatalf("wallet link of the rest %q", href)
	}
	shoot(t, ctx, dir, "underpaid-phone")
	run(t, ctx, chromedp.Click(chromedp.CSS(`button[data-copy="amount"]`)))
	waitFor(t, ctx, `document.querySelector('button[data-copy="amount"]').textContent === "Copied"`)
	if got := eval[string](t, ctx, `navigator.clipboard.readText()`); got != missing {
		t.Fatalf("copied %q, want the rest %q", got, missing)
	}

	// The rest: seen in the mempool, then in a block.
	s.broadcast(t, in, payment.Native, rest(in, part), "chromium-rest")
	s.Sync(btc)
	waitFor(t, ctx, stateIs("confirming"))
	if got := text(t, ctx, "#status"); !strings.Contains(got, "0 of 2 confirmations") {
		t.Fatalf("in the mempool: %q", got)
	}
	s.Chains[btc].Mine(1)
	s.Sync(btc)
	waitFor(t, ctx, `document.getElementById('status').textContent.includes('1 of 2 confirmations')`)
	if v := eval[int](t, ctx, `document.getElementById('confirmations').value`); v != 1 {
		t.Fatalf("progress %d", v)
	}
	shoot(t, ctx, dir, "confirming-phone")
	s.Chains[btc].Mine(1)
	s.Sync(btc)
	waitFor(t, ctx, stateIs("paid"))
	if got := text(t, ctx, "#state-title"); got != "Paid. Thank you!" {
		t.Fatalf("paid title %q", got)
	}
	if href := eval[string](t, ctx, `document.getElementById('return').href`); href != "https://shop.example.com/orders/ORD-2026-0042" {
		t.Fatalf("return button %q", href)
	}
	if rel := eval[string](t, ctx, `document.getElementById('return').rel`); rel != "noreferrer" {
		t.Fatalf("return rel %q", rel)
	}
	if hidden := eval[bool](t, ctx, `document.getElementById('pay').hidden`); !hidden {
		t.Fatal("the instructions are still shown once paid")
	}
	if !eval[bool](t, ctx, marked) {
		t.Fatal("the page reloaded")
	}
	if title := eval[string](t, ctx, `document.title`); !strings.HasPrefix(title, "Paid. Thank you!") {
		t.Fatalf("title %q", title)
	}
	checkA11y(t, ctx, "paid")
	shoot(t, ctx, dir, "paid-phone")
	run(t, ctx, chromedp.EmulateViewport(desktop, height))
	shoot(t, ctx, dir, "paid-desktop")
}

// An expired page offers the storefront's renewal link; a payment that
// arrives after the deadline turns it, live, into "arrived, with the shop
// for review"; an overpaid page is paid with a note on the surplus.
func TestChromiumExpiredLateAndOverpaid(t *testing.T) {
	s := newSite(t, siteOptions{checkout: func(c *config.Checkout) {
		c.RenewURL = "https://shop.example.com/{kind}s/{reference}/pay"
	}})
	dir := shotDir(t)
	btc := payment.Bitcoin
	late := s.create(t, "ORD-LATE/7", "25.00", nil)
	over := s.create(t, "ORD-OVER", "25.00", nil)
	s.Pay(over, payment.Native, new(big.Int).Add(paywatchtest.Units(over.AmountBaseUnits), big.NewInt(12345)), "chromium-over")
	s.Chains[btc].Mine(1)
	s.Sync(btc)
	s.Clock.Advance(31 * time.Minute)
	if _, err := s.Service.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t, desktop)

	open(t, ctx, s.URL+s.pageOf(t, over))
	if got := text(t, ctx, "#state-title"); got != "Paid. Thank you!" {
		t.Fatalf("overpaid: %q", got)
	}
	if note := text(t, ctx, ".note"); note != "More than the amount arrived: the extra 0.00012345 BTC is with Example Shop for review. It is not lost." {
		t.Fatalf("overpaid note %q", note)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#return').length`); n != 0 {
		t.Fatal("a return button without a return_url")
	}
	shoot(t, ctx, dir, "overpaid-desktop")

	open(t, ctx, s.URL+s.pageOf(t, late))
	waitFor(t, ctx, stateIs("expired")+` && document.body.dataset.connected === "1"`)
	if got := text(t, ctx, "#status"); !strings.Contains(got, "The time to pay has run out") || !strings.Contains(got, "Please do not send anything to this address now") {
		t.Fatalf("expired: %q", got)
	}
	if href := eval[string](t, ctx, `document.getElementById('renew').href`); href != "https://shop.example.com/orders/ORD-LATE%2F7/pay" {
		t.Fatalf("renew link %q", href)
	}
	if hidden := eval[bool](t, ctx, `document.getElementById('pay').hidden`); !hidden {
		t.Fatal("an expired page shows the payment instructions")
	}
	checkA11y(t, ctx, "expired")
	shoot(t, ctx, dir, "expired-desktop")
	run(t, ctx, js(mark))
	s.Pay(late, payment.Native, paywatchtest.Units(late.AmountBaseUnits), "chromium-late")
	s.Sync(btc)
	waitFor(t, ctx, stateIs("review"))
	got := text(t, ctx, "#status")
	if !strings.Contains(got, "Your payment arrived: the shop will review it") || !strings.Contains(got, "arrived after the deadline") ||
		!strings.Contains(got, "It is not lost") || strings.Contains(strings.ReplaceAll(got, "not lost", ""), "lost") {
		t.Fatalf("paid late: %q", got)
	}
	if !eval[bool](t, ctx, marked) {
		t.Fatal("the page reloaded")
	}
	shoot(t, ctx, dir, "late-desktop")
}

// Without a renewal link an expired page says to contact the shop; a
// transfer in another asset is with the shop for review while the page
// still takes the right one; a short payment at the deadline says what
// arrived and what was missing.
func TestChromiumContactWrongAssetAndShort(t *testing.T) {
	s := newSite(t, siteOptions{env: []paywatchtest.Option{paywatchtest.Only(payment.Bitcoin, payment.Ethereum)}})
	dir := shotDir(t)
	ctx := browser(t, phone)
	exp := s.create(t, "ORD-EXP", "25.00", nil)
	short := s.create(t, "ORD-SHORT", "25.00", nil)
	status, body := s.Do("POST", "/v1/intents", "storefront", map[string]string{"kind": "order", "reference": "ORD-ETH",
		"amount_usd": "25.00", "method": "ETH"})
	if status != 201 {
		t.Fatalf("ETH: %d %s", status, body)
	}
	var eth views.Intent
	mustJSON(t, body, &eth)
	s.Pay(short, payment.Native, big.NewInt(10000), "chromium-short")
	s.Sync(payment.Bitcoin)

	open(t, ctx, s.URL+s.pageOf(t, eth))
	waitFor(t, ctx, `document.body.dataset.connected === "1"`)
	s.Pay(eth, payment.USDT, big.NewInt(25_000_000), "chromium-usdt")
	s.Sync(payment.Ethereum)
	waitFor(t, ctx, stateIs("review"))
	got := text(t, ctx, "#status")
	if !strings.Contains(got, "25 USDT arrived at this address, but this page asks for Ether (ETH) on Ethereum.") ||
		!strings.Contains(got, "It is not lost") || !strings.Contains(got, "To pay with Ether (ETH) on Ethereum now, send 0.01 ETH before the deadline.") {
		t.Fatalf("wrong asset: %q", got)
	}
	if hidden := eval[bool](t, ctx, `document.getElementById('pay').hidden`); hidden {
		t.Fatal("the instructions are hidden while the intent still takes ETH")
	}
	if w := text(t, ctx, "#warning"); !strings.Contains(w, "Only ether (ETH) on Ethereum mainnet") {
		t.Fatalf("warning %q", w)
	}
	shoot(t, ctx, dir, "wrong-asset-phone")

	s.Clock.Advance(31 * time.Minute)
	if _, err := s.Service.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	open(t, ctx, s.URL+s.pageOf(t, exp))
	if got := text(t, ctx, "#status"); !strings.Contains(got, "Please contact Example Shop.") {
		t.Fatalf("expired without a renewal link: %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#renew').length`); n != 0 {
		t.Fatal("a renewal link without checkout.renew_url")
	}
	open(t, ctx, s.URL+s.pageOf(t, short))
	if got := text(t, ctx, "#status"); !strings.Contains(got, "0.0001 BTC arrived before the deadline, 0.0004 BTC short of the amount.") ||
		!strings.Contains(got, "It is not lost") {
		t.Fatalf("short: %q", got)
	}
	checkA11y(t, ctx, "short")
	shoot(t, ctx, dir, "short-phone")
}

// A German browser gets the page and its live messages in German; a
// forged token is a plain 404; without JavaScript the page still shows
// everything static and the report form works.
func TestChromiumGermanNotFoundAndNoScript(t *testing.T) {
	s := newSite(t, siteOptions{})
	dir := shotDir(t)
	in := s.create(t, "ORD-DE", "25.00", nil)
	path := s.pageOf(t, in)
	ctx := browser(t, phone, chromedp.Flag("lang", "de-DE"), chromedp.Flag("accept-lang", "de-DE,de"))
	open(t, ctx, s.URL+path)
	waitFor(t, ctx, `document.body.dataset.connected === "1"`)
	if lang := eval[string](t, ctx, `document.documentElement.lang`); lang != "de" {
		t.Fatalf("lang %q", lang)
	}
	if got := text(t, ctx, "#state-title"); got != "Wir warten auf Ihre Zahlung" {
		t.Fatalf("German title %q", got)
	}
	if c := text(t, ctx, "#countdown"); !strings.HasPrefix(c, "noch ") {
		t.Fatalf("German countdown %q", c)
	}
	s.Pay(in, payment.Native, half(in), "chromium-de")
	s.Sync(payment.Bitcoin)
	waitFor(t, ctx, stateIs("underpaid"))
	if got := text(t, ctx, "#state-title"); got != "Ein Teil der Zahlung ist angekommen" {
		t.Fatalf("German live message %q", got)
	}
	checkA11y(t, ctx, "German underpaid")
	shoot(t, ctx, dir, "underpaid-phone-de")

	if st := open(t, ctx, s.URL+"/pay/"+strings.Repeat("Q", 43)); st != 404 {
		t.Fatalf("forged token: %d", st)
	}
	if got := text(t, ctx, "h1"); got != "Seite nicht gefunden" {
		t.Fatalf("404 page %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('a, form, code, svg').length`); n != 0 {
		t.Fatal("the 404 page shows more than its words")
	}

	// No JavaScript: the static page and the report form.
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	other := s.create(t, "ORD-NOJS", "25.00", nil)
	open(t, ctx, s.URL+s.pageOf(t, other))
	if vis, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#amount"))); err != nil || vis == "" {
		t.Fatalf("amount without JavaScript: %q %v", vis, err)
	}
	// Without JavaScript the deadline is in UTC, said so.
	if got := text(t, ctx, "#deadline-at"); !strings.HasSuffix(got, " UTC") || !strings.HasPrefix(got, "30. November 2026") {
		t.Fatalf("deadline without JavaScript %q", got)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('button.copy:not([hidden])').length`)); err == nil && n != 0 {
		t.Fatalf("%d copy buttons shown without JavaScript", n)
	}
	run(t, ctx, chromedp.Click(chromedp.ID("report")), chromedp.WaitVisible(chromedp.ID("reported")))
	if v := s.Intent(other.ID); v.ReportedAt == nil {
		t.Fatal("the report without JavaScript was not recorded")
	}
	shoot(t, ctx, dir, "reported-nojs-phone-de")
}

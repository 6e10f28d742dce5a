package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/paywatch/paywatch/availability"
	"github.com/paywatch/paywatch/devnet/devnettest"
	"github.com/paywatch/paywatch/finance"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/reports"
	"github.com/paywatch/paywatch/views"
)

// screenshots is where the Chromium tests write their screenshots; empty
// means a temporary directory. `go test ./console -run Chromium -args
// -screenshots ../docs/console` refreshes the committed ones.
var screenshots = flag.String("screenshots", "", "directory for console screenshots (default: a temp dir)")

// findChromium returns the browser to drive: $CHROMIUM, else Debian's
// chromium, else another Chrome on the PATH.
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

// browser starts a headless Chromium (a missing one fails under CI) and
// returns a tab context with a window of width×900.
func browser(t *testing.T, width int) context.Context {
	t.Helper()
	path, err := findChromium()
	devnettest.Need(t, "Chromium", err)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(width, 900), chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	ctx, cancelTime := context.WithTimeout(ctx, 8*time.Minute) // a safety net on a loaded machine, not a wait
	t.Cleanup(cancelTime)
	devnettest.Need(t, "Chromium", chromedp.Do(ctx))
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

// shoot writes a full-page PNG screenshot and checks it is not empty.
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

// waitFor waits until a script condition holds in the page (checked on
// every animation frame, never a fixed sleep).
func waitFor(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	ok := eval[bool](t, ctx, `new Promise(r => { const f = () => (`+cond+`) ? r(true) : setTimeout(f, 20); f(); })`)
	if !ok {
		t.Fatalf("condition %s", cond)
	}
}

// signInBrowser signs in through the form.
func signInBrowser(t *testing.T, ctx context.Context, base, key string) {
	t.Helper()
	open(t, ctx, base+"/console/signin")
	run(t, ctx, chromedp.SendKeys(chromedp.ID("api_key"), key), chromedp.Click(chromedp.ID("signin")),
		chromedp.WaitVisible(chromedp.ID("signout")))
}

func inboxIDs(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#inbox tbody tr[data-id]')).map(r => r.dataset.id)`)
}

func apiIDs(p finance.InboxPage) []string {
	out := []string{}
	for _, t := range p.Transfers {
		out = append(out, t.ID)
	}
	return out
}

// Finance signs in, sees exactly the API's inbox, resolves one transfer
// with each of the four actions (a missing note is refused with the API's
// message on screen), sees each decision with who/when/why, its event on
// the intent's timeline, the reconciliation equal to the API's JSON, and
// signs out.
func TestChromiumFinanceResolvesWithEachAction(t *testing.T) {
	s := newSite(t)
	cs := s.scenario(t)
	ctx := browser(t, 1280)
	dir := shotDir(t)

	signInBrowser(t, ctx, s.URL, s.Keys["finance"])
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		t.Fatal(err)
	}
	var session *network.Cookie
	for _, c := range res.Cookies {
		if c.Name == "paywatch_console" {
			session = c
		}
	}
	if session == nil || !session.HTTPOnly || session.SameSite != network.CookieSameSiteStrict || session.Path != "/console/" {
		t.Fatalf("session cookie in the browser: %+v", session)
	}

	// The inbox lists exactly the API's unresolved transfers, in its order.
	if st := open(t, ctx, s.URL+"/console/inbox"); st != 200 {
		t.Fatalf("inbox: %d", st)
	}
	want := apiIDs(s.apiInbox(t, "status=unresolved"))
	if got := inboxIDs(t, ctx); strings.Join(got, ",") != strings.Join(want, ",") || len(want) != 4 {
		t.Fatalf("console inbox %v, API inbox %v", got, want)
	}
	if got := text(t, ctx, "#inbox-total"); got != "4" {
		t.Fatalf("inbox total %q, want 4", got)
	}
	// The USD column is the transfer at its intent's locked rate (the late
	// top-up pays exactly 100.00 at 50,000 USD/BTC).
	late := s.byClass(t, "late")
	if got := text(t, ctx, `#inbox tr[data-id="`+late.ID+`"] td.usd`); got != "100.00" {
		t.Fatalf("late transfer USD %q, want 100.00", got)
	}
	if href := eval[string](t, ctx, `document.querySelector('#inbox tr[data-id="`+late.ID+`"] a.ext').href`); href != "https://mempool.example/tx/"+late.TxID {
		t.Fatalf("explorer link %q", href)
	}
	// Filters: the network × classification filter is the API's.
	open(t, ctx, s.URL+"/console/inbox?network=bitcoin&classification=dust")
	if got := inboxIDs(t, ctx); len(got) != 1 || got[0] != s.byClass(t, "dust").ID {
		t.Fatalf("dust filter: %v", got)
	}
	open(t, ctx, s.URL+"/console/inbox?age=old")
	if got := inboxIDs(t, ctx); len(got) != 0 {
		t.Fatalf("older than 7 days: %v", got)
	}
	// Keyboard: j selects the first row, Enter opens it.
	open(t, ctx, s.URL+"/console/inbox")
	shoot(t, ctx, dir, "inbox")
	run(t, ctx, chromedp.KeyEvent("j"), chromedp.WaitVisible(chromedp.CSS("#inbox tr.sel")), chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(chromedp.CSS("form.action")))
	if loc := eval[string](t, ctx, `location.pathname`); loc != "/console/transfers/"+want[0] {
		t.Fatalf("Enter opened %s, want transfer %s", loc, want[0])
	}

	under, dup, dust := s.byClass(t, "partial"), s.byClass(t, "duplicate"), s.byClass(t, "dust")
	steps := []struct {
		tr     views.Transfer
		action string
		fields map[string]string
		says   string
	}{
		{late, finance.ActionCreditIntent, map[string]string{"intent_id": cs.Late.ID}, "toward " + cs.Late.ID},
		{under, finance.ActionCreditAccount, map[string]string{"account": "cust-u"}, "Credits 50.00 USD"},
		{dup, finance.ActionRefunded, map[string]string{"refund_txid": strings.Repeat("ab", 32)}, "sent back"},
		{dust, finance.ActionIgnore, nil, "ignored"},
	}
	// The API's text for a missing note.
	_, body := s.Do("POST", "/v1/transfers/"+late.ID+"/resolve", "finance", map[string]string{"action": "ignore", "note": ""})
	var apiErr struct{ Error struct{ Message string } }
	if err := json.Unmarshal(body, &apiErr); err != nil || apiErr.Error.Message == "" {
		t.Fatalf("API missing-note error: %s", body)
	}
	for i, st := range steps {
		form := "#form-" + st.action
		open(t, ctx, s.URL+"/console/transfers/"+st.tr.ID)
		run(t, ctx, chromedp.Click(chromedp.CSS(`.tabs a[data-tab="`+st.action+`"]`)), chromedp.WaitVisible(chromedp.CSS(form)))
		if says := text(t, ctx, form+" .says"); !strings.Contains(says, st.says) {
			t.Fatalf("%s says %q, want it to contain %q", st.action, says, st.says)
		}
		// Only the fields the action needs.
		inputs := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('`+form+` input:not([type=hidden]), `+form+` textarea')).map(e => e.name)`)
		wantInputs := []string{}
		for _, f := range []string{"intent_id", "account", "usd_per_unit", "refund_txid"} {
			if _, ok := st.fields[f]; ok || (f == "usd_per_unit" && st.action == finance.ActionCreditAccount) {
				wantInputs = append(wantInputs, f)
			}
		}
		if st.action == finance.ActionCreditAccount {
			// A rate the rate book does not confirm needs a reason (issue 22).
			wantInputs = append(wantInputs, "override_reason")
		}
		wantInputs = append(wantInputs, "note")
		if strings.Join(inputs, ",") != strings.Join(wantInputs, ",") {
			t.Fatalf("%s asks for %v, want %v", st.action, inputs, wantInputs)
		}
		for name, v := range st.fields {
			run(t, ctx, chromedp.SetValue(chromedp.CSS(form+` [name="`+name+`"]`), v))
		}
		// No note: refused with the API's message, nothing recorded.
		run(t, ctx, chromedp.Click(chromedp.CSS(form+` button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("error-message")))
		if got := text(t, ctx, "#error-message"); got != apiErr.Error.Message {
			t.Fatalf("%s without a note: %q, want the API's %q", st.action, got, apiErr.Error.Message)
		}
		if i == 0 {
			shoot(t, ctx, dir, "resolve-refused")
		}
		if tr := s.transfer(t, st.tr.ID); tr.Resolution != nil {
			t.Fatalf("a refused resolution was recorded: %+v", tr.Resolution)
		}
		note := fmt.Sprintf("console test %d: %s", i, st.action)
		run(t, ctx, chromedp.WaitVisible(chromedp.CSS(form)), chromedp.SendKeys(chromedp.CSS(form+" textarea"), note),
			js(`document.getElementById('error-message').remove()`), chromedp.Click(chromedp.CSS(form+` button[type=submit]`)),
			chromedp.WaitVisible(chromedp.CSS(`#done-message, #error-message`)))
		if msg := eval[string](t, ctx, `(document.getElementById('error-message') || {}).textContent || ''`); msg != "" {
			t.Fatalf("%s with a note refused: %s", st.action, msg)
		}
		if got := text(t, ctx, "#resolution .actor"); got != "finance-key" {
			t.Fatalf("%s: actor on screen %q", st.action, got)
		}
		if got := text(t, ctx, "#resolution .note"); got != note {
			t.Fatalf("%s: note on screen %q", st.action, got)
		}
		if i == 1 {
			shoot(t, ctx, dir, "transfer-resolved")
		}
		tr := s.transfer(t, st.tr.ID)
		if tr.Resolution == nil || tr.Resolution.Action != st.action || tr.Resolution.Actor != "finance-key" || tr.Resolution.Note != note {
			t.Fatalf("%s: API shows %+v", st.action, tr.Resolution)
		}
		if !s.hasEvent(t, "transfer.resolved", st.tr.ID) {
			t.Fatalf("%s: no transfer.resolved event", st.action)
		}
		// It left the unresolved inbox and shows in the resolved one.
		open(t, ctx, s.URL+"/console/inbox")
		for _, id := range inboxIDs(t, ctx) {
			if id == st.tr.ID {
				t.Fatalf("%s: still unresolved on screen", st.action)
			}
		}
		if got, want := inboxIDs(t, ctx), apiIDs(s.apiInbox(t, "status=unresolved")); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("after %s: console %v, API %v", st.action, got, want)
		}
	}
	open(t, ctx, s.URL+"/console/inbox?status=resolved")
	if got, want := inboxIDs(t, ctx), apiIDs(s.apiInbox(t, "status=resolved")); len(got) != 4 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("resolved: console %v, API %v", got, want)
	}
	if who := text(t, ctx, `#inbox tr[data-id="`+dust.ID+`"] .resolved`); !strings.Contains(who, "finance-key") || !strings.Contains(who, "console test 3: ignore") || !strings.Contains(who, "2026-11-30") {
		t.Fatalf("resolved row says %q", who)
	}
	shoot(t, ctx, dir, "inbox-resolved")

	// The credited intent: paid, and the timeline shows the resolution.
	open(t, ctx, s.URL+"/console/intents/"+cs.Late.ID)
	if tl := text(t, ctx, "#timeline"); !strings.Contains(tl, "transfer.resolved") || !strings.Contains(tl, "intent.paid") || !strings.Contains(tl, "credit_intent by finance-key") {
		t.Fatalf("timeline: %q", tl)
	}
	if w := eval[int](t, ctx, `document.querySelector('.qr img').naturalWidth`); w == 0 {
		t.Fatal("the QR code did not load")
	}
	if uri := text(t, ctx, "#payment-uri"); uri != s.Intent(cs.Late.ID).PaymentURI {
		t.Fatalf("payment URI %q", uri)
	}
	shoot(t, ctx, dir, "intent")

	// Balances: the top-up credited by credit_intent, with its running balance.
	open(t, ctx, s.URL+"/console/balances?account=cust-17")
	_, body = s.Do("GET", "/v1/accounts/cust-17/balance", "storefront", nil)
	var bal finance.BalanceView
	if err := json.Unmarshal(body, &bal); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "#available"); got != bal.AvailableUSD+" USD" || bal.AvailableUSD != "100.00" {
		t.Fatalf("available on screen %q, API %q", got, bal.AvailableUSD)
	}
	shoot(t, ctx, dir, "balances")

	// Search: a payable reference opens the payable.
	open(t, ctx, s.URL+"/console/search?q=ORD-UNDER")
	if loc := eval[string](t, ctx, `location.pathname`); loc != "/console/payables/order/ORD-UNDER" {
		t.Fatalf("search opened %s", loc)
	}
	open(t, ctx, s.URL+"/console/search?q="+late.TxID)
	if loc := eval[string](t, ctx, `location.pathname`); loc != "/console/transfers/"+late.ID {
		t.Fatalf("txid search opened %s", loc)
	}
	// An intent's address opens the intent (found on each network through
	// the (network, address) index, migration 0017).
	open(t, ctx, s.URL+"/console/search?q="+under.Address)
	if loc := eval[string](t, ctx, `location.pathname`); under.IntentID == nil || loc != "/console/intents/"+*under.IntentID {
		t.Fatalf("address search opened %s", loc)
	}
	open(t, ctx, s.URL+"/console/search?q=cust-17")
	shoot(t, ctx, dir, "search")

	// Reconciliation on screen equals the API's JSON, with the identity held.
	q := "from=2026-11-01&to=2026-12-01"
	open(t, ctx, s.URL+"/console/reconciliation?"+q)
	_, body = s.Do("GET", "/v1/reports/reconciliation?"+q, "finance", nil)
	var rep reports.Reconciliation
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Totals) == 0 {
		t.Fatal("empty reconciliation")
	}
	for _, tot := range rep.Totals {
		row := `#recon-totals tr[data-method="` + tot.Method + `"] `
		for field, want := range map[string]string{"transfers": fmt.Sprint(tot.Transfers), "total": tot.TotalAmount,
			"settled": tot.SettledAmount, "unresolved": tot.UnresolvedAmount, "resolved": tot.ResolvedAmount} {
			if got := text(t, ctx, row+`[data-field="`+field+`"]`); got != want {
				t.Errorf("%s %s on screen %q, API %q", tot.Method, field, got, want)
			}
		}
		if got := text(t, ctx, row+`[data-field="identity"]`); !strings.Contains(got, "holds") || strings.Contains(got, "not") {
			t.Errorf("%s identity: %q", tot.Method, got)
		}
	}
	if rows := eval[int](t, ctx, `document.querySelectorAll('#recon-rows tbody tr').length`); rows != len(rep.Rows) {
		t.Fatalf("%d rows on screen, API %d", rows, len(rep.Rows))
	}
	if bars := eval[int](t, ctx, `document.querySelectorAll('#recon-chart rect').length`); bars == 0 {
		t.Fatal("no bars in the chart")
	}
	shoot(t, ctx, dir, "reconciliation")
	// The JSON download is the API's report.
	js := eval[string](t, ctx, `fetch(document.getElementById('download-json').href).then(r => r.text())`)
	var dl reports.Reconciliation
	if err := json.Unmarshal([]byte(js), &dl); err != nil {
		t.Fatalf("download: %v", err)
	}
	a, _ := json.Marshal(dl)
	b, _ := json.Marshal(rep)
	if string(a) != string(b) {
		t.Fatalf("download differs from the API:\n%s\n%s", a, b)
	}
	csv := eval[string](t, ctx, `fetch(document.getElementById('download-csv').href).then(r => r.text())`)
	if n := strings.Count(strings.TrimSpace(csv), "\n"); n != len(rep.Rows) || !strings.Contains(csv, "console test 1: credit_account") {
		t.Fatalf("csv has %d rows, want %d", n, len(rep.Rows))
	}

	// At 800 px the inbox is still usable: no horizontal page scroll beyond the table.
	run(t, ctx, chromedp.EmulateViewport(800, 900))
	open(t, ctx, s.URL+"/console/inbox?status=all")
	if over := eval[bool](t, ctx, `document.documentElement.scrollWidth > 820`); over {
		t.Errorf("the inbox overflows at 800 px: %v", eval[int](t, ctx, `document.documentElement.scrollWidth`))
	}
	shoot(t, ctx, dir, "inbox-800px")
	run(t, ctx, chromedp.EmulateViewport(1280, 900))

	// Sign out: back to the sign-in page, and the inbox is closed.
	open(t, ctx, s.URL+"/console/inbox")
	run(t, ctx, chromedp.Click(chromedp.ID("signout")), chromedp.WaitVisible(chromedp.ID("api_key")))
	open(t, ctx, s.URL+"/console/inbox")
	if loc := eval[string](t, ctx, `location.pathname`); loc != "/console/signin" {
		t.Fatalf("after sign-out the inbox is at %s", loc)
	}
	shoot(t, ctx, dir, "signin")
	if _, err := s.Store.ConsoleSessionByToken(context.Background(), session.Value, s.Clock.Now()); err == nil {
		t.Fatal("the session survived sign-out")
	}
}

// A finance key cannot open operator screens (403); a POST whose CSRF
// token was removed is refused and changes nothing; the operator sees the
// networks as the API reports them and schedules a rescan after a
// confirmation step.
func TestChromiumScopesCSRFAndOperatorScreens(t *testing.T) {
	s := newSite(t)
	s.scenario(t)
	ctx := browser(t, 1280)
	dir := shotDir(t)

	signInBrowser(t, ctx, s.URL, s.Keys["finance"])
	for _, path := range []string{"/console/networks", "/console/webhooks"} {
		if st := open(t, ctx, s.URL+path); st != 403 {
			t.Fatalf("finance opened %s: %d", path, st)
		}
		if msg := text(t, ctx, "#error-message"); msg != `this API key lacks the "operator" scope` {
			t.Fatalf("403 says %q", msg)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('.top nav a[href="/console/networks"]').length`); n != 0 {
		t.Fatal("finance's menu shows Networks")
	}
	// CSRF: drop the token from a real form and submit it.
	dust := s.byClass(t, "dust")
	before := s.Counts()
	open(t, ctx, s.URL+"/console/transfers/"+dust.ID+"?action=ignore")
	run(t, ctx, chromedp.SendKeys(chromedp.CSS("#form-ignore textarea"), "spam"),
		js(`document.querySelector('#form-ignore input[name=csrf]').remove()`),
		chromedp.Click(chromedp.CSS(`#form-ignore button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("error-message")))
	if msg := text(t, ctx, "#error-message"); !strings.Contains(msg, "CSRF") {
		t.Fatalf("POST without CSRF: %q", msg)
	}
	if after := s.Counts(); after["resolutions"] != before["resolutions"] || after["events"] != before["events"] {
		t.Fatalf("a POST without CSRF changed %v -> %v", before, after)
	}
	if tr := s.transfer(t, dust.ID); tr.Resolution != nil {
		t.Fatal("resolved without CSRF")
	}
	// A wrong token (another session's) is refused too.
	open(t, ctx, s.URL+"/console/transfers/"+dust.ID+"?action=ignore")
	run(t, ctx, chromedp.SendKeys(chromedp.CSS("#form-ignore textarea"), "spam"),
		chromedp.SetValue(chromedp.CSS(`#form-ignore input[name=csrf]`), strings.Repeat("0", 64)),
		chromedp.Click(chromedp.CSS(`#form-ignore button[type=submit]`)), chromedp.WaitVisible(chromedp.ID("error-message")))
	if msg := text(t, ctx, "#error-message"); !strings.Contains(msg, "CSRF") {
		t.Fatalf("POST with a wrong CSRF token: %q", msg)
	}
	run(t, ctx, chromedp.Click(chromedp.ID("signout")), chromedp.WaitVisible(chromedp.ID("api_key")))

	// Storefront: lookups only.
	signInBrowser(t, ctx, s.URL, s.Keys["storefront"])
	if st := open(t, ctx, s.URL+"/console/transfers/"+dust.ID); st != 403 {
		t.Fatalf("storefront opened a transfer to resolve: %d", st)
	}
	if st := open(t, ctx, s.URL+"/console/intents/"+*dust.IntentID); st != 200 {
		t.Fatalf("storefront intent lookup: %d", st)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('form[action*="/resolve"]').length`); n != 0 {
		t.Fatal("storefront sees resolve forms")
	}
	run(t, ctx, chromedp.Click(chromedp.ID("signout")), chromedp.WaitVisible(chromedp.ID("api_key")))

	// Operator: networks as /v1/status reports them; rescan with a confirmation.
	s.Console.Sample(context.Background())
	s.Clock.Advance(time.Minute)
	s.Console.Sample(context.Background())
	signInBrowser(t, ctx, s.URL, s.Keys["operator"])
	if loc := eval[string](t, ctx, `location.pathname`); loc != "/console/networks" {
		t.Fatalf("operator landed on %s", loc)
	}
	_, body := s.Do("GET", "/v1/status", "operator", nil)
	var status struct{ Networks []availability.NetworkStatus }
	if err := json.Unmarshal(body, &status); err != nil {
		t.Fatal(err)
	}
	for _, n := range status.Networks {
		if !n.Enabled {
			continue
		}
		row := `#networks tr[data-network="` + n.Network + `"]`
		cells := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('`+row+` td')).map(c => c.textContent.trim())`)
		final := fmt.Sprint(n.FinalHeight)
		if n.FinalHeight == 0 {
			final = "by conf." // no finality marker: confirmations decide (issue 36 item 9)
		}
		if len(cells) < 10 || cells[2] != fmt.Sprint(n.NodeHeight) || cells[3] != fmt.Sprint(n.ScannedHeight) ||
			cells[4] != final || cells[5] != fmt.Sprint(n.LagBlocks) || cells[9] != fmt.Sprint(n.AddressesWatched) {
			t.Fatalf("%s on screen %v, API %+v", n.Network, cells, n)
		}
		if want := map[bool]string{true: "healthy", false: "unhealthy"}[n.Healthy]; cells[1] != want {
			t.Fatalf("%s health %q, want %q", n.Network, cells[1], want)
		}
	}
	if pts := eval[string](t, ctx, `(document.querySelector('.charts polyline') || {getAttribute: () => ''}).getAttribute('points')`); strings.Count(pts, ",") != 2 {
		t.Fatalf("lag chart points %q, want 2 samples", pts)
	}
	shoot(t, ctx, dir, "networks")
	run(t, ctx, chromedp.SendKeys(chromedp.CSS(`#rescan-bitcoin input[name=from_height]`), "1"),
		chromedp.Click(chromedp.CSS(`#rescan-bitcoin button`)), chromedp.WaitVisible(chromedp.ID("confirm-rescan")))
	if cur, err := s.Store.GetCursor(context.Background(), "bitcoin"); err != nil || cur.RescanFrom != nil {
		t.Fatalf("rescan scheduled before confirmation: %+v %v", cur.RescanFrom, err)
	}
	shoot(t, ctx, dir, "rescan-confirm")
	run(t, ctx, chromedp.Click(chromedp.ID("confirm-rescan")), chromedp.WaitVisible(chromedp.ID("done-message")))
	if cur, err := s.Store.GetCursor(context.Background(), "bitcoin"); err != nil || cur.RescanFrom == nil || *cur.RescanFrom != 1 {
		t.Fatalf("rescan after confirmation: %+v %v", cur.RescanFrom, err)
	}
	// A negative height is refused with the API's range rule and message.
	open(t, ctx, s.URL+"/console/networks")
	run(t, ctx, chromedp.SetValue(chromedp.CSS(`#rescan-bitcoin input[name=from_height]`), "-5"),
		chromedp.Click(chromedp.CSS(`#rescan-bitcoin button`)), chromedp.WaitVisible(chromedp.ID("confirm-rescan")),
		chromedp.Click(chromedp.ID("confirm-rescan")), chromedp.WaitVisible(chromedp.ID("error-message")))
	_, body = s.Do("POST", "/v1/networks/bitcoin/rescan", "operator", map[string]int{"from_height": -5})
	var apiErr struct{ Error struct{ Message string } }
	if err := json.Unmarshal(body, &apiErr); err != nil {
		t.Fatal(err)
	}
	if msg := text(t, ctx, "#error-message"); msg != apiErr.Error.Message {
		t.Fatalf("negative rescan: %q, API %q", msg, apiErr.Error.Message)
	}

	// Webhooks: an endpoint, its cursor and backlog, redeliver; another
	// endpoint's real deliveries, named by event type.
	if err := s.Store.EnsureWebhookEndpoint(context.Background(), "shop", "https://shop.example/hook", "", false, s.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	deliverEvents(t, s, "receiver")
	open(t, ctx, s.URL+"/console/webhooks")
	last, err := s.Store.LastEventSeq(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cells := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#endpoints tr[data-endpoint="shop"] td')).map(c => c.textContent.trim())`)
	if len(cells) < 4 || cells[2] != "0" || cells[3] != fmt.Sprint(last) {
		t.Fatalf("endpoint row %v, want cursor 0 and backlog %d", cells, last)
	}
	run(t, ctx, chromedp.SendKeys(chromedp.CSS(`#endpoints tr[data-endpoint="shop"] input[name=from_seq]`), "1"),
		chromedp.Click(chromedp.CSS(`#endpoints tr[data-endpoint="shop"] button`)), chromedp.WaitVisible(chromedp.ID("done-message")))
	if log := text(t, ctx, "#deliveries"); !strings.Contains(log, "redeliver") || !strings.Contains(log, "intent.created") {
		t.Fatalf("delivery log: %q", log)
	}
	shoot(t, ctx, dir, "webhooks")
}

// The unresolved count in the menu refreshes by itself when a new
// transfer lands (long-poll of the event feed), without a reload.
func TestChromiumInboxCountRefreshesLive(t *testing.T) {
	s := newSite(t)
	ctx := browser(t, 1280)
	in := s.CreateIntent("order", "ORD-LIVE", "", "10.00", "BTC")
	signInBrowser(t, ctx, s.URL, s.Keys["all"])
	open(t, ctx, s.URL+"/console/search")
	run(t, ctx, js(`window.__marker = 1`))
	// Nothing to review yet: the badge is hidden once the first answer is in.
	waitFor(t, ctx, `document.body.dataset.live === "1" && getComputedStyle(document.querySelector('[data-live="inbox"]')).display === "none"`)
	s.Pay(in, payment.Native, big.NewInt(1000), "live-partial")
	s.Sync(payment.Bitcoin)
	waitFor(t, ctx, `getComputedStyle(document.querySelector('[data-live="inbox"]')).display !== "none"`)
	if got := text(t, ctx, `[data-live="inbox"]`); got != "1" {
		t.Fatalf("live inbox count %q, want 1", got)
	}
	if m := eval[int](t, ctx, `window.__marker || 0`); m != 1 {
		t.Fatal("the page reloaded")
	}
}

package checkout_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/paywatch/paywatch/checkout"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
	"github.com/paywatch/paywatch/views"
)

// firstScreen checks that the amount, the address and their copy buttons
// are on the first screen, every character of the address visible (it
// wraps between groups, never cut or scrolled away), and that the QR code
// is large enough to scan (at least 4 px a module).
func firstScreen(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	run(t, ctx, js(`window.scrollTo(0, 0)`))
	problems := eval[[]string](t, ctx, `(() => {
	  const out = [];
	  const h = window.innerHeight, w = window.innerWidth;
	  for (const sel of ['#amount', '#address', 'button[data-copy="amount"]', 'button[data-copy="address"]']) {
	    const el = document.querySelector(sel);
	    if (!el || el.hidden || el.offsetParent === null) { out.push(sel + ' not shown'); continue; }
	    const r = el.getBoundingClientRect();
	    if (r.top < 0 || r.bottom > h || r.left < 0 || r.right > w) out.push(sel + ' outside the first screen: ' + JSON.stringify([r.top, r.bottom, r.left, r.right, h, w]));
	  }
	  const a = document.getElementById('address');
	  if (a) {
	    if (a.scrollWidth > a.clientWidth + 1) out.push('the address scrolls: ' + a.scrollWidth + ' > ' + a.clientWidth);
	    const box = a.getBoundingClientRect();
	    let joined = '';
	    for (const g of a.querySelectorAll('span')) {
	      const r = g.getBoundingClientRect();
	      if (r.left < box.left - 1 || r.right > box.right + 1 || r.right > w) out.push('address group ' + g.textContent + ' cut');
	      if (g.getClientRects().length !== 1) out.push('address group ' + g.textContent + ' broken');
	      joined += g.textContent;
	    }
	    if (joined !== a.dataset.value) out.push('the groups ' + joined + ' are not the address ' + a.dataset.value);
	  }
	  const qr = document.getElementById('qr');
	  if (qr) {
	    const px = qr.getBoundingClientRect().width / qr.viewBox.baseVal.width;
	    if (px < 4) out.push('QR module ' + px.toFixed(2) + ' px');
	  }
	  return out;
	})()`)
	if len(problems) > 0 {
		t.Errorf("%s: %v", what, problems)
	}
}

// Every language at a phone and a desktop size (issue 35 items 1, 2, 4,
// 6, 7): the storefront's locale picks the page's language; amounts and
// the USD total are written in its way (the copy button copies the amount
// as it must be sent); the deadline is in the browser's time zone with
// its offset named, the countdown beside it; the amount, the address and
// their copy buttons are on a phone's first screen, the address whole;
// the language switch works; once paid the page shows a receipt with the
// transaction and its confirmations, offers to print it, and its print
// view is the receipt alone; nothing private on any of it.
func TestChromiumEveryLanguage(t *testing.T) {
	s := newSite(t, siteOptions{})
	dir := shotDir(t)
	ctx := browser(t, phone)
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Jakarta"}); err != nil {
		t.Fatal(err)
	}
	offset := regexp.MustCompile(`(GMT|UTC)\s?\+0?7`)
	for i, c := range []struct {
		lang, usd, waiting, paid, receipt, tx string
	}{
		{"en", "1,250.00 USD", "Waiting for your payment", "Paid. Thank you!", "Receipt", "confirmations"},
		{"de", "1.250,00 USD", "Wir warten auf Ihre Zahlung", "Bezahlt. Vielen Dank!", "Beleg", "Bestätigungen"},
		{"fr", "1\u202f250,00 USD", "En attente de votre paiement", "Payée. Merci\u202f!", "Reçu", "confirmations"},
		{"id", "1.250,00 USD", "Menunggu pembayaran Anda", "Lunas. Terima kasih!", "Bukti pembayaran", "konfirmasi"},
	} {
		l := checkout.LangOf(c.lang, "")
		in := s.create(t, "ORD-LANG-"+strings.ToUpper(c.lang), "1250.00", map[string]string{"locale": c.lang})
		path := s.pageOf(t, in)
		open(t, ctx, s.URL+path)
		waitFor(t, ctx, `document.body.dataset.connected === "1"`)
		if got := eval[string](t, ctx, `document.documentElement.lang`); got != c.lang {
			t.Fatalf("%s: lang %q", c.lang, got)
		}
		amount := payment.TrimUnits(paywatchtest.Units(in.AmountBaseUnits), 8)
		for sel, want := range map[string]string{"#state-title": c.waiting, "#usd": c.usd, "#amount": l.Decimal(amount)} {
			if got := text(t, ctx, sel); got != want {
				t.Errorf("%s %s: %q, want %q", c.lang, sel, got, want)
			}
		}
		if got := eval[string](t, ctx, `document.getElementById('amount').dataset.value`); got != amount {
			t.Errorf("%s: the copy button copies %q, want %q", c.lang, got, amount)
		}
		// The customer's clock: the browser's zone (Jakarta, +7), named.
		waitFor(t, ctx, `document.getElementById('deadline-at').dataset.local === "1"`)
		if got := text(t, ctx, "#deadline-at"); !offset.MatchString(got) {
			t.Errorf("%s: deadline %q without the browser's offset", c.lang, got)
		}
		if !eval[bool](t, ctx, `document.getElementById('countdown').parentElement === document.getElementById('deadline-at').parentElement`) {
			t.Errorf("%s: the countdown is not beside the deadline", c.lang)
		}
		if got := text(t, ctx, "#hints"); !strings.Contains(got, l.T("method.BTC")) {
			t.Errorf("%s: hints %q", c.lang, got)
		}
		firstScreen(t, ctx, c.lang+" waiting")
		checkA11y(t, ctx, c.lang+" waiting")
		shoot(t, ctx, dir, "waiting-phone-"+c.lang)
		run(t, ctx, chromedp.EmulateViewport(desktop, height))
		shoot(t, ctx, dir, "waiting-desktop-"+c.lang)
		checkA11y(t, ctx, c.lang+" waiting desktop")
		run(t, ctx, chromedp.EmulateViewport(phone, height))

		// The switch: a plain link to the page in another language.
		other := checkout.Languages()[(i+1)%4]
		href := eval[string](t, ctx, `document.querySelector('.langs a[hreflang="`+other.Tag+`"]').getAttribute('href')`)
		if href != path+"?lang="+other.Tag {
			t.Errorf("%s: the switch to %s links %q", c.lang, other.Tag, href)
		}
		open(t, ctx, s.URL+href)
		if got := eval[string](t, ctx, `document.documentElement.lang`); got != other.Tag {
			t.Errorf("%s -> %s: lang %q", c.lang, other.Tag, got)
		}
		if got := text(t, ctx, "#state-title"); got != other.T("state.waiting.title") {
			t.Errorf("%s -> %s: %q", c.lang, other.Tag, got)
		}
		open(t, ctx, s.URL+path)
		waitFor(t, ctx, `document.body.dataset.connected === "1"`)

		// Paid: the receipt.
		s.Pay(in, payment.Native, paywatchtest.Units(in.AmountBaseUnits), "lang-"+c.lang)
		if n := in.ConfirmationsRequired - 1; n > 0 {
			s.Chains[payment.Bitcoin].Mine(n)
		}
		s.Sync(payment.Bitcoin)
		waitFor(t, ctx, stateIs("paid"))
		if got := text(t, ctx, "#state-title"); got != c.paid {
			t.Errorf("%s: paid %q", c.lang, got)
		}
		if got := text(t, ctx, "#receipt-heading"); got != c.receipt {
			t.Errorf("%s: receipt heading %q", c.lang, got)
		}
		for sel, want := range map[string]string{"#receipt-shop": "Example Shop", "#receipt-usd": c.usd, "#receipt-method": l.T("method.BTC"),
			"#receipt-received": l.Decimal(amount) + " BTC", "#receipt-rate": "1 BTC = 50000 USD"} {
			if got := text(t, ctx, sel); got != want {
				t.Errorf("%s %s: %q, want %q", c.lang, sel, got, want)
			}
		}
		txs := s.Intent(in.ID).Transfers
		if got := text(t, ctx, "#receipt .tx"); len(txs) != 1 || !strings.Contains(got, txs[0].TxID) || !strings.Contains(got, c.tx) {
			t.Errorf("%s: receipt transaction %q", c.lang, got)
		}
		waitFor(t, ctx, `document.getElementById('receipt-paid').dataset.local === "1"`)
		if got := text(t, ctx, "#receipt-paid"); !offset.MatchString(got) {
			t.Errorf("%s: paid at %q", c.lang, got)
		}
		if hidden := eval[bool](t, ctx, `document.getElementById('print').hidden`); hidden {
			t.Errorf("%s: no print button", c.lang)
		}
		body := text(t, ctx, "body")
		for _, secret := range []string{"cust-secret-account-77", in.ID, strings.TrimPrefix(in.ID, "pi_")} {
			if strings.Contains(body, secret) {
				t.Errorf("%s: the paid page shows %q", c.lang, secret)
			}
		}
		checkA11y(t, ctx, c.lang+" paid")
		shoot(t, ctx, dir, "paid-phone-"+c.lang)
		// The print view: the receipt, nothing to click.
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
			t.Fatal(err)
		}
		for sel, want := range map[string]string{".langs": "none", "footer": "none", "#receipt": "block", ".print": "none", "header": "block"} {
			if got := eval[string](t, ctx, `getComputedStyle(document.querySelector('`+sel+`')).display`); got != want {
				t.Errorf("%s print view: %s display %q, want %q", c.lang, sel, got, want)
			}
		}
		shoot(t, ctx, dir, "receipt-print-"+c.lang)
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{}); err != nil {
			t.Fatal(err)
		}
	}
}

// At the deadline the page changes state in one step: the instructions
// and their copy buttons go and the status says the time has run out in
// the same moment; never "the deadline has passed" beside a card that
// still says "waiting" (issue 35 item 6).
func TestChromiumDeadlineInOneStep(t *testing.T) {
	s := newSite(t, siteOptions{})
	dir := shotDir(t)
	ctx := browser(t, phone)
	in := s.create(t, "ORD-DEADLINE", "25.00", map[string]string{"locale": "fr"})
	open(t, ctx, s.URL+s.pageOf(t, in))
	waitFor(t, ctx, `document.body.dataset.connected === "1"`)
	// Watch every change of the page for the mixed state, then move the
	// page's deadline to the past: the next tick reaches it.
	run(t, ctx, js(`window.__mixed = [];
	  new MutationObserver(() => {
	    const c = document.getElementById('countdown'), pay = document.getElementById('pay');
	    const passed = c && c.classList.contains('passed') && !pay.hidden;
	    const waiting = document.querySelector('#status .state-waiting');
	    if (passed || (waiting && pay.hidden)) window.__mixed.push(document.getElementById('status').textContent.trim().slice(0, 60));
	  }).observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
	  document.getElementById('countdown').dataset.deadline = '2000-01-01T00:00:00Z';`))
	waitFor(t, ctx, stateIs("expired"))
	if mixed := eval[[]string](t, ctx, `window.__mixed`); len(mixed) > 0 {
		t.Fatalf("the page showed a mixed state at the deadline: %q", mixed)
	}
	if got := text(t, ctx, "#state-title"); got != "Le délai de paiement est écoulé" {
		t.Fatalf("at the deadline: %q", got)
	}
	if n := eval[int](t, ctx, `Array.from(document.querySelectorAll('button.copy')).filter(b => b.offsetParent !== null).length`); n != 0 {
		t.Fatalf("%d copy buttons after the deadline", n)
	}
	if hidden := eval[bool](t, ctx, `document.getElementById('pay').hidden`); !hidden {
		t.Fatal("the instructions are shown after the deadline")
	}
	if !strings.HasPrefix(eval[string](t, ctx, `document.title`), "Le délai de paiement est écoulé") {
		t.Fatal("the title still says waiting")
	}
	checkA11y(t, ctx, "at the deadline")
	shoot(t, ctx, dir, "deadline-phone-fr")
}

// The method chosen on the page, in a real browser at a phone's size and
// with the keyboard (issue 35 items 3 and 7): the payable's page lists
// the enabled methods with their networks in words, USDT on Ethereum and
// USDT on Tron apart; Enter on one makes its intent and shows its page,
// with the hint of its network (TRX for energy on Tron, ETH for gas on
// Ethereum); the change link leads back to the choice, and another pick
// replaces the open intent.
func TestChromiumChooseMethod(t *testing.T) {
	s := newSite(t, siteOptions{env: []paywatchtest.Option{paywatchtest.Only(payment.Bitcoin, payment.Ethereum, payment.Tron)}})
	dir := shotDir(t)
	status, pp, raw := s.createPayable(t, map[string]string{"kind": "order", "reference": "ORD-PICK-7", "amount_usd": "500.00", "locale": "id"})
	if status != 201 {
		t.Fatalf("payable: %d %s", status, raw)
	}
	l := checkout.LangOf("id", "")
	ctx := browser(t, phone)
	open(t, ctx, pp.PaymentPageURL)
	if got := text(t, ctx, "#choose-heading"); got != l.T("choose.title") {
		t.Fatalf("choice heading %q", got)
	}
	for _, c := range []struct{ method, network string }{{"USDT-ERC20", "ethereum.token"}, {"USDT-TRC20", "tron.token"}, {"BTC", "bitcoin"},
		{"TRX", "tron"}, {"ETH", "ethereum"}} {
		got := text(t, ctx, "#method-"+c.method)
		if !strings.Contains(got, l.T("method."+c.method)) || !strings.Contains(got, l.T("choose.network."+c.network)) {
			t.Errorf("%s: %q", c.method, got)
		}
	}
	checkA11y(t, ctx, "choice")
	shoot(t, ctx, dir, "choose-phone-id")
	run(t, ctx, chromedp.EmulateViewport(desktop, height))
	shoot(t, ctx, dir, "choose-desktop-id")
	run(t, ctx, chromedp.EmulateViewport(phone, height))

	// With the keyboard: focus USDT on Tron, Enter.
	run(t, ctx, chromedp.Focus(chromedp.ID("method-USDT-TRC20")), chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.ID("amount")))
	if got := text(t, ctx, "#method"); got != l.T("method.USDT-TRC20") {
		t.Fatalf("picked %q", got)
	}
	if got := text(t, ctx, "#hints"); !strings.Contains(got, l.T("hint.trx_energy")) || strings.Contains(got, "ETH") {
		t.Errorf("USDT on Tron hints %q", got)
	}
	firstScreen(t, ctx, "USDT on Tron")
	checkA11y(t, ctx, "USDT on Tron")
	shoot(t, ctx, dir, "waiting-phone-id-usdt-trc20")
	if n := s.Counts()["intents"]; n != 1 {
		t.Fatalf("%d intents after one pick", n)
	}

	// Change to USDT on Ethereum.
	run(t, ctx, chromedp.Click(chromedp.CSS("#change a")), chromedp.WaitVisible(chromedp.ID("method-USDT-ERC20")))
	if cur := eval[string](t, ctx, `document.querySelector('button[aria-current]').value`); cur != "USDT-TRC20" {
		t.Fatalf("current %q", cur)
	}
	run(t, ctx, chromedp.Click(chromedp.ID("method-USDT-ERC20")), chromedp.WaitVisible(chromedp.ID("amount")))
	if got := text(t, ctx, "#method"); got != l.T("method.USDT-ERC20") {
		t.Fatalf("picked %q", got)
	}
	if got := text(t, ctx, "#hints"); !strings.Contains(got, l.T("hint.eth_gas", "symbol", "USDT")) || strings.Contains(got, "TRX") {
		t.Errorf("USDT on Ethereum hints %q", got)
	}
	firstScreen(t, ctx, "USDT on Ethereum")
	shoot(t, ctx, dir, "waiting-phone-id-usdt-erc20")
	var p struct{ Intents []views.Intent }
	_, body := s.Do("GET", "/v1/payables/order/ORD-PICK-7", "storefront", nil)
	mustJSON(t, body, &p)
	if len(p.Intents) != 2 || p.Intents[0].Status != payment.IntentSuperseded || p.Intents[1].Method != "USDT-ERC20" || p.Intents[1].Status != payment.IntentAwaiting {
		t.Fatalf("after the change: %s", body)
	}
}

package checkout

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"golang.org/x/text/language"
)

// The message catalogue: every word the page shows, per language. Templates
// hold markup only and ask for their words by key (Lang.T); a {name} in a
// message is replaced by the argument of that name.
var catalogue = map[string]map[string]string{
	"en": {
		"lang.name":                     "English",
		"lang.switch":                   "Language",
		"choose.title":                  "Choose how to pay",
		"choose.body":                   "Pick a coin and its network. The exact amount, the address and the time to pay appear on the next screen.",
		"choose.network.bitcoin":        "Bitcoin network",
		"choose.network.litecoin":       "Litecoin network",
		"choose.network.ethereum":       "Ethereum network",
		"choose.network.ethereum.token": "Ethereum network (ERC-20)",
		"choose.network.tron":           "Tron network",
		"choose.network.tron.token":     "Tron network (TRC-20)",
		"choose.network.solana":         "Solana network",
		"choose.current":                "current choice",
		"choose.back":                   "Back to the payment",
		"choose.change":                 "Pay with another coin or network",
		"choose.seen":                   "A payment has already arrived for your current choice, so it cannot be changed now. Please finish paying it there.",
		"choose.unknown":                "Please choose one of the methods below.",
		"choose.unavailable":            "{method} cannot be used right now. Please choose another method, or try again in a few minutes.",
		"pay.hints":                     "Before you send",
		"hint.trx_energy":               "Keep some TRX in the wallet you send from: a USDT transfer on Tron burns TRX for energy, and without it the transfer fails.",
		"hint.eth_gas":                  "Keep some ETH in the wallet you send from: a {symbol} transfer on Ethereum pays its gas in ETH.",
		"hint.exchange":                 "Paying from an exchange? Choose {method} as the withdrawal network, and add the withdrawal fee on top: the amount shown must arrive here.",
		"receipt.heading":               "Receipt",
		"receipt.keep":                  "Keep this receipt for your records.",
		"receipt.shop":                  "Paid to",
		"receipt.for":                   "For",
		"receipt.usd":                   "Amount",
		"receipt.method":                "Paid with",
		"receipt.received":              "Received",
		"receipt.rate":                  "Rate",
		"receipt.paid_at":               "Paid on",
		"receipt.tx":                    "Transaction",
		"receipt.confirmations":         "{n} confirmations",
		"receipt.print":                 "Print or save as PDF",
		"months":                        "January February March April May June July August September October November December",
		"page.title":                    "Payment",
		"page.title.shop":               "Payment to {shop}",
		"page.order":                    "Order {reference}",
		"page.topup":                    "Balance top-up {reference}",
		"page.total":                    "Total",
		"page.testnet":                  "Test network ({chain}): this is not real money.",
		"pay.heading":                   "How to pay",
		"pay.method":                    "Pay with",
		"pay.send":                      "Send exactly",
		"pay.send.rest":                 "Send the rest, exactly",
		"pay.to":                        "To this address",
		"pay.copy":                      "Copy",
		"pay.copied":                    "Copied",
		"pay.copy.amount":               "Copy the amount",
		"pay.copy.address":              "Copy the address",
		"pay.qr":                        "QR code with the address and the amount, for your wallet app",
		"pay.wallet":                    "Open in a wallet app",
		"pay.rate":                      "Rate: 1 {symbol} = {rate} USD, locked until the deadline.",
		"pay.deadline":                  "Pay by",
		"pay.left":                      "{left} left",
		"pay.passed":                    "The deadline has passed.",
		"pay.exact":                     "Send the exact amount in one payment if you can. Network fees are on top: the amount above must arrive.",
		"warn.BTC":                      "Only bitcoin (BTC) on the Bitcoin network. Not Lightning, not wrapped BTC on another network: those are lost.",
		"warn.LTC":                      "Only litecoin (LTC) on the Litecoin network: LTC sent over any other network is lost.",
		"warn.ETH":                      "Only ether (ETH) on Ethereum mainnet: ETH sent on another network (Arbitrum, Base, Optimism, BNB Smart Chain…) is lost.",
		"warn.USDT-ERC20":               "Only USDT on Ethereum (ERC-20): USDT sent on another network (Tron, BNB Smart Chain, Solana…) is lost.",
		"warn.USDC-ERC20":               "Only USDC on Ethereum (ERC-20): USDC sent on another network (Base, Solana, Arbitrum…) is lost.",
		"warn.TRX":                      "Only TRX on the Tron network: TRX sent over any other network is lost.",
		"warn.USDT-TRC20":               "Only USDT on Tron (TRC-20): USDT sent on another network (Ethereum, BNB Smart Chain, Solana…) is lost.",
		"warn.SOL":                      "Only SOL on Solana, as a plain SOL transfer: SOL sent over any other network is lost.",
		"method.BTC":                    "Bitcoin (BTC)",
		"method.LTC":                    "Litecoin (LTC)",
		"method.ETH":                    "Ether (ETH) on Ethereum",
		"method.USDT-ERC20":             "USDT on Ethereum (ERC-20)",
		"method.USDC-ERC20":             "USDC on Ethereum (ERC-20)",
		"method.TRX":                    "TRX on Tron",
		"method.USDT-TRC20":             "USDT on Tron (TRC-20)",
		"method.SOL":                    "SOL on Solana",
		"state.waiting.title":           "Waiting for your payment",
		"state.waiting.body":            "Send the exact amount below before the deadline. This page changes by itself as soon as the payment shows up on the network.",
		"state.confirming.title":        "Payment seen on the network",
		"state.confirming.count":        "{n} of {required} confirmations.",
		"state.confirming.pending":      "In the network, not yet in a block: 0 of {required} confirmations.",
		"state.confirming.finality":     "Waiting for the network to make it final (usually within a minute).",
		"state.confirming.body":         "Each new block adds a confirmation; at {required} the payment is final and this page says so. You can close this page: the shop is told either way.",
		"state.underpaid.title":         "Part of the payment arrived",
		"state.underpaid.body":          "{received} {symbol} arrived. {missing} {symbol} is still missing.",
		"state.underpaid.next":          "Send the missing {missing} {symbol} to the same address before the deadline ({time}).",
		"state.paid.title":              "Paid. Thank you!",
		"state.paid.body":               "{shop} has received your payment of {amount} {symbol} for {what}.",
		"state.paid.return":             "Back to {shop}",
		"state.expired.title":           "The time to pay has run out",
		"state.expired.body":            "Nothing arrived before the deadline, and this payment request no longer takes payments. Please do not send anything to this address now.",
		"state.expired.renew":           "Start a new payment",
		"state.review.title":            "Your payment arrived: the shop will review it",
		"state.review.late":             "{received} {asset} arrived after the deadline.",
		"state.review.short":            "{received} {symbol} arrived before the deadline, {missing} {symbol} short of the amount.",
		"state.review.wrong_asset":      "{received} {asset} arrived at this address, but this page asks for {method}.",
		"state.review.duplicate":        "{received} {asset} arrived for {what}, which was already paid.",
		"state.review.held":             "It is not lost: it is with {shop} for review, who will credit it or send it back.",
		"state.review.still":            "To pay with {method} now, send {amount} {symbol} before the deadline.",
		"state.renewed.title":           "This payment request was replaced",
		"state.renewed.body":            "A newer payment request replaced this one. Please pay there.",
		"state.renewed.link":            "Open the new payment request",
		"state.reverted.title":          "The network reversed this payment",
		"state.reverted.body":           "After it was confirmed, the network reorganised and the payment is no longer in it. {shop} has been told.",
		"note.overpaid":                 "More than the amount arrived: the extra {amount} {asset} is with {shop} for review. It is not lost.",
		"note.wrong_asset":              "{amount} {asset} also arrived at this address; this page does not take {asset}. It is with {shop} for review, not lost.",
		"note.late":                     "{amount} {asset} arrived after the deadline. It is with {shop} for review, not lost.",
		"note.duplicate":                "{amount} {asset} arrived after this was paid. It is with {shop} for review, not lost.",
		"contact":                       "Please contact {shop}.",
		"contact.link":                  "Contact {shop}",
		"report.ask":                    "Already sent it? Tell the shop, in case it takes long to show up.",
		"report.button":                 "I have paid",
		"report.done":                   "You told the shop you paid ({time}). That is a note, not a confirmation: this page turns to paid once the payment is on the network. If nothing shows up within an hour, contact the shop.",
		"live.paused":                   "Live updates paused: reconnecting…",
		"live.noscript":                 "This page updates by itself with JavaScript. Without it, reload to see the latest status.",
		"live.reload":                   "Reload",
		"what.order":                    "order {reference}",
		"what.topup":                    "balance top-up {reference}",
		"notfound.title":                "Page not found",
		"notfound.body":                 "There is no payment page at this address. Check the link you were given, or ask the shop for a new one.",
		"error.title":                   "Something went wrong on our side",
		"error.body":                    "Please reload this page in a minute.",
		"limited.title":                 "Too many requests",
		"limited.body":                  "Too many requests came from your connection. Please wait a minute, then reload.",
		"shop.default":                  "the shop",
		"footer":                        "Payment page of {shop}.",
		"status.label":                  "Payment status",
		"time.format":                   "{day} {month} {year}, {hh}:{mm} {zone}",
		"duration.hm":                   "{h} h {m} min",
		"duration.m":                    "{m} min",
	},
	"de": {
		"lang.name":                     "Deutsch",
		"lang.switch":                   "Sprache",
		"choose.title":                  "Zahlungsart wählen",
		"choose.body":                   "Wählen Sie eine Kryptowährung und ihr Netzwerk. Den genauen Betrag, die Adresse und die Frist sehen Sie auf der nächsten Seite.",
		"choose.network.bitcoin":        "Bitcoin-Netzwerk",
		"choose.network.litecoin":       "Litecoin-Netzwerk",
		"choose.network.ethereum":       "Ethereum-Netzwerk",
		"choose.network.ethereum.token": "Ethereum-Netzwerk (ERC-20)",
		"choose.network.tron":           "Tron-Netzwerk",
		"choose.network.tron.token":     "Tron-Netzwerk (TRC-20)",
		"choose.network.solana":         "Solana-Netzwerk",
		"choose.current":                "aktuelle Wahl",
		"choose.back":                   "Zurück zur Zahlung",
		"choose.change":                 "Mit einer anderen Währung oder in einem anderen Netzwerk bezahlen",
		"choose.seen":                   "Für Ihre aktuelle Wahl ist bereits eine Zahlung angekommen, daher lässt sie sich jetzt nicht mehr ändern. Bitte schließen Sie die Zahlung dort ab.",
		"choose.unknown":                "Bitte wählen Sie eine der Zahlungsarten unten.",
		"choose.unavailable":            "{method} ist gerade nicht verfügbar. Bitte wählen Sie eine andere Zahlungsart oder versuchen Sie es in ein paar Minuten erneut.",
		"pay.hints":                     "Vor dem Senden",
		"hint.trx_energy":               "Lassen Sie etwas TRX in der Wallet, von der Sie senden: Eine USDT-Überweisung auf Tron verbraucht TRX für Energie, ohne TRX schlägt sie fehl.",
		"hint.eth_gas":                  "Lassen Sie etwas ETH in der Wallet, von der Sie senden: Eine {symbol}-Überweisung auf Ethereum bezahlt ihr Gas in ETH.",
		"hint.exchange":                 "Zahlen Sie von einer Börse aus? Wählen Sie {method} als Auszahlungsnetzwerk und rechnen Sie die Auszahlungsgebühr dazu: Der angezeigte Betrag muss hier ankommen.",
		"receipt.heading":               "Beleg",
		"receipt.keep":                  "Bewahren Sie diesen Beleg für Ihre Unterlagen auf.",
		"receipt.shop":                  "Bezahlt an",
		"receipt.for":                   "Für",
		"receipt.usd":                   "Betrag",
		"receipt.method":                "Bezahlt mit",
		"receipt.received":              "Erhalten",
		"receipt.rate":                  "Kurs",
		"receipt.paid_at":               "Bezahlt am",
		"receipt.tx":                    "Transaktion",
		"receipt.confirmations":         "{n} Bestätigungen",
		"receipt.print":                 "Drucken oder als PDF speichern",
		"months":                        "Januar Februar März April Mai Juni Juli August September Oktober November Dezember",
		"page.title":                    "Zahlung",
		"page.title.shop":               "Zahlung an {shop}",
		"page.order":                    "Bestellung {reference}",
		"page.topup":                    "Guthabenaufladung {reference}",
		"page.total":                    "Summe",
		"page.testnet":                  "Testnetz ({chain}): Das ist kein echtes Geld.",
		"pay.heading":                   "So bezahlen Sie",
		"pay.method":                    "Zahlen mit",
		"pay.send":                      "Senden Sie genau",
		"pay.send.rest":                 "Senden Sie genau den Rest",
		"pay.to":                        "An diese Adresse",
		"pay.copy":                      "Kopieren",
		"pay.copied":                    "Kopiert",
		"pay.copy.amount":               "Betrag kopieren",
		"pay.copy.address":              "Adresse kopieren",
		"pay.qr":                        "QR-Code mit Adresse und Betrag für Ihre Wallet-App",
		"pay.wallet":                    "In einer Wallet-App öffnen",
		"pay.rate":                      "Kurs: 1 {symbol} = {rate} USD, fest bis zur Frist.",
		"pay.deadline":                  "Zahlen Sie bis",
		"pay.left":                      "noch {left}",
		"pay.passed":                    "Die Frist ist abgelaufen.",
		"pay.exact":                     "Senden Sie den genauen Betrag möglichst in einer Zahlung. Netzwerkgebühren kommen hinzu: Der Betrag oben muss ankommen.",
		"warn.BTC":                      "Nur Bitcoin (BTC) im Bitcoin-Netzwerk. Kein Lightning, kein verpacktes BTC in einem anderen Netzwerk: Das geht verloren.",
		"warn.LTC":                      "Nur Litecoin (LTC) im Litecoin-Netzwerk: LTC über ein anderes Netzwerk geht verloren.",
		"warn.ETH":                      "Nur Ether (ETH) im Ethereum-Mainnet: ETH in einem anderen Netzwerk (Arbitrum, Base, Optimism, BNB Smart Chain …) geht verloren.",
		"warn.USDT-ERC20":               "Nur USDT auf Ethereum (ERC-20): USDT in einem anderen Netzwerk (Tron, BNB Smart Chain, Solana …) geht verloren.",
		"warn.USDC-ERC20":               "Nur USDC auf Ethereum (ERC-20): USDC in einem anderen Netzwerk (Base, Solana, Arbitrum …) geht verloren.",
		"warn.TRX":                      "Nur TRX im Tron-Netzwerk: TRX über ein anderes Netzwerk geht verloren.",
		"warn.USDT-TRC20":               "Nur USDT auf Tron (TRC-20): USDT in einem anderen Netzwerk (Ethereum, BNB Smart Chain, Solana …) geht verloren.",
		"warn.SOL":                      "Nur SOL auf Solana, als einfache SOL-Überweisung: SOL über ein anderes Netzwerk geht verloren.",
		"method.BTC":                    "Bitcoin (BTC)",
		"method.LTC":                    "Litecoin (LTC)",
		"method.ETH":                    "Ether (ETH) auf Ethereum",
		"method.USDT-ERC20":             "USDT auf Ethereum (ERC-20)",
		"method.USDC-ERC20":             "USDC auf Ethereum (ERC-20)",
		"method.TRX":                    "TRX auf Tron",
		"method.USDT-TRC20":             "USDT auf Tron (TRC-20)",
		"method.SOL":                    "SOL auf Solana",
		"state.waiting.title":           "Wir warten auf Ihre Zahlung",
		"state.waiting.body":            "Senden Sie den genauen Betrag unten vor Ablauf der Frist. Diese Seite ändert sich von selbst, sobald die Zahlung im Netzwerk erscheint.",
		"state.confirming.title":        "Zahlung im Netzwerk gesehen",
		"state.confirming.count":        "{n} von {required} Bestätigungen.",
		"state.confirming.pending":      "Im Netzwerk, noch in keinem Block: 0 von {required} Bestätigungen.",
		"state.confirming.finality":     "Wir warten, bis das Netzwerk sie endgültig macht (meist innerhalb einer Minute).",
		"state.confirming.body":         "Jeder neue Block bringt eine Bestätigung; bei {required} ist die Zahlung endgültig, und diese Seite zeigt es. Sie können die Seite schließen: Der Shop erfährt es so oder so.",
		"state.underpaid.title":         "Ein Teil der Zahlung ist angekommen",
		"state.underpaid.body":          "{received} {symbol} sind angekommen. Es fehlen noch {missing} {symbol}.",
		"state.underpaid.next":          "Senden Sie die fehlenden {missing} {symbol} vor Ablauf der Frist ({time}) an dieselbe Adresse.",
		"state.paid.title":              "Bezahlt. Vielen Dank!",
		"state.paid.body":               "{shop} hat Ihre Zahlung von {amount} {symbol} für {what} erhalten.",
		"state.paid.return":             "Zurück zu {shop}",
		"state.expired.title":           "Die Zeit zum Bezahlen ist abgelaufen",
		"state.expired.body":            "Vor Ablauf der Frist ist nichts angekommen, und diese Zahlungsanforderung nimmt keine Zahlungen mehr an. Bitte senden Sie jetzt nichts mehr an diese Adresse.",
		"state.expired.renew":           "Neue Zahlung beginnen",
		"state.review.title":            "Ihre Zahlung ist angekommen: Der Shop prüft sie",
		"state.review.late":             "{received} {asset} sind nach Ablauf der Frist angekommen.",
		"state.review.short":            "{received} {symbol} sind vor Ablauf der Frist angekommen, {missing} {symbol} weniger als der Betrag.",
		"state.review.wrong_asset":      "{received} {asset} sind an dieser Adresse angekommen, aber diese Seite verlangt {method}.",
		"state.review.duplicate":        "{received} {asset} sind für {what} angekommen, die schon bezahlt war.",
		"state.review.held":             "Das Geld ist nicht verloren: {shop} prüft es und schreibt es gut oder sendet es zurück.",
		"state.review.still":            "Um jetzt mit {method} zu bezahlen, senden Sie {amount} {symbol} vor Ablauf der Frist.",
		"state.renewed.title":           "Diese Zahlungsanforderung wurde ersetzt",
		"state.renewed.body":            "Eine neuere Zahlungsanforderung hat diese ersetzt. Bitte bezahlen Sie dort.",
		"state.renewed.link":            "Neue Zahlungsanforderung öffnen",
		"state.reverted.title":          "Das Netzwerk hat diese Zahlung rückgängig gemacht",
		"state.reverted.body":           "Nach ihrer Bestätigung hat sich das Netzwerk reorganisiert, und die Zahlung ist nicht mehr darin. {shop} wurde informiert.",
		"note.overpaid":                 "Es ist mehr als der Betrag angekommen: Die zusätzlichen {amount} {asset} prüft {shop}. Sie sind nicht verloren.",
		"note.wrong_asset":              "An dieser Adresse sind außerdem {amount} {asset} angekommen; diese Seite nimmt kein {asset} an. {shop} prüft es, es ist nicht verloren.",
		"note.late":                     "{amount} {asset} sind nach Ablauf der Frist angekommen. {shop} prüft es, es ist nicht verloren.",
		"note.duplicate":                "{amount} {asset} sind angekommen, nachdem schon bezahlt war. {shop} prüft es, es ist nicht verloren.",
		"contact":                       "Bitte wenden Sie sich an {shop}.",
		"contact.link":                  "{shop} kontaktieren",
		"report.ask":                    "Schon gesendet? Sagen Sie es dem Shop, falls es lange dauert, bis die Zahlung erscheint.",
		"report.button":                 "Ich habe bezahlt",
		"report.done":                   "Sie haben dem Shop gesagt, dass Sie bezahlt haben ({time}). Das ist ein Hinweis, keine Bestätigung: Diese Seite zeigt „bezahlt“, sobald die Zahlung im Netzwerk ist. Erscheint innerhalb einer Stunde nichts, wenden Sie sich an den Shop.",
		"live.paused":                   "Live-Aktualisierung unterbrochen: neue Verbindung …",
		"live.noscript":                 "Diese Seite aktualisiert sich mit JavaScript von selbst. Ohne JavaScript laden Sie sie neu, um den neuesten Stand zu sehen.",
		"live.reload":                   "Neu laden",
		"what.order":                    "Bestellung {reference}",
		"what.topup":                    "Guthabenaufladung {reference}",
		"notfound.title":                "Seite nicht gefunden",
		"notfound.body":                 "Unter dieser Adresse gibt es keine Zahlungsseite. Prüfen Sie den Link, den Sie erhalten haben, oder bitten Sie den Shop um einen neuen.",
		"error.title":                   "Bei uns ist etwas schiefgegangen",
		"error.body":                    "Bitte laden Sie die Seite in einer Minute neu.",
		"limited.title":                 "Zu viele Anfragen",
		"limited.body":                  "Von Ihrer Verbindung kamen zu viele Anfragen. Bitte warten Sie eine Minute und laden Sie dann neu.",
		"shop.default":                  "der Shop",
		"footer":                        "Zahlungsseite von {shop}.",
		"status.label":                  "Zahlungsstatus",
		"time.format":                   "{day}. {month} {year}, {hh}:{mm} {zone}",
		"duration.hm":                   "{h} Std. {m} Min.",
		"duration.m":                    "{m} Min.",
	},
	"fr": french,
	"id": indonesian,
}

// Lang is one language of the catalogue.
type Lang struct {
	// Tag is the language's BCP 47 tag (the page's lang attribute).
	Tag  string
	msgs map[string]string
}

// languages are the catalogue's languages, the first the default.
var languages = []language.Tag{language.English, language.German, language.French, language.Indonesian}

var langMatcher = language.NewMatcher(languages)

// langs holds a Lang per catalogue language.
var langs = func() map[string]*Lang {
	out := map[string]*Lang{}
	for tag, msgs := range catalogue {
		out[tag] = &Lang{Tag: tag, msgs: msgs}
	}
	return out
}()

// LangOf picks the page's language: explicit (a ?lang= of the live
// endpoint) when it names a catalogue language, else the best match of an
// Accept-Language header, else English.
func LangOf(explicit, acceptLanguage string) *Lang {
	if l, ok := langs[explicit]; ok {
		return l
	}
	if len(acceptLanguage) > 512 {
		acceptLanguage = acceptLanguage[:512]
	}
	tags, _, err := language.ParseAcceptLanguage(acceptLanguage)
	if err != nil || len(tags) == 0 {
		return langs["en"]
	}
	_, i, conf := langMatcher.Match(tags...)
	if conf == language.No {
		return langs["en"]
	}
	base, _ := languages[i].Base()
	if l, ok := langs[base.String()]; ok {
		return l
	}
	return langs["en"]
}

// T returns the message of key with each {name} replaced by the argument
// after that name (args are name, value pairs). A key missing from this
// language is taken from English; one missing everywhere is shown as the
// key (TestCatalogueIsComplete fails first).
func (l *Lang) T(key string, args ...any) string {
	msg, ok := l.msgs[key]
	if !ok {
		if msg, ok = catalogue["en"][key]; !ok {
			return key
		}
	}
	if len(args) == 0 {
		return msg
	}
	pairs := make([]string, 0, len(args))
	for i := 0; i+1 < len(args); i += 2 {
		pairs = append(pairs, "{"+fmt.Sprint(args[i])+"}", fmt.Sprint(args[i+1]))
	}
	return strings.NewReplacer(pairs...).Replace(msg)
}

// Time formats a time in UTC in the language's way (the page's script
// shows it again in the customer's own time zone).
func (l *Lang) Time(t time.Time) string {
	t = t.UTC()
	months := strings.Fields(l.T("months"))
	month := t.Month().String()
	if len(months) == 12 {
		month = months[t.Month()-1]
	}
	return l.T("time.format", "day", t.Day(), "month", month, "year", t.Year(),
		"hh", fmt.Sprintf("%02d", t.Hour()), "mm", fmt.Sprintf("%02d", t.Minute()), "zone", "UTC")
}

// separators are each language's decimal mark and thousands separator.
var separators = map[string][2]string{
	"en": {".", ","},
	"de": {",", "."},
	"fr": {",", "\u202f"}, // a narrow no-break space
	"id": {",", "."},
}

// Decimal writes a decimal string ("0.0125", "1234.5") with the
// language's decimal mark, every digit kept: an amount in a coin is shown
// exactly as it must be sent, only the mark changes.
func (l *Lang) Decimal(s string) string {
	return strings.Replace(s, ".", separators[l.Tag][0], 1)
}

// USD formats a USD decimal ("1234.00") in the language's way, with
// thousands grouped ("1,234.00", "1.234,00", "1 234,00").
func (l *Lang) USD(s string) string {
	sep := separators[l.Tag]
	whole, frac, hasFrac := strings.Cut(s, ".")
	neg := strings.HasPrefix(whole, "-")
	whole = strings.TrimPrefix(whole, "-")
	var b strings.Builder
	if neg {
		b.WriteString("-")
	}
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteString(sep[1])
		}
		b.WriteRune(r)
	}
	if hasFrac {
		b.WriteString(sep[0] + frac)
	}
	return b.String()
}

// Languages returns the catalogue's languages, for the language switch:
// the default first.
func Languages() []*Lang {
	out := make([]*Lang, len(languages))
	for i, t := range languages {
		out[i] = langs[t.String()]
	}
	return out
}

// ErrUnknownLocale is CheckLocale's error for a language the page does
// not speak.
var ErrUnknownLocale = errors.New("must be one of the payment page's languages: en, de, fr, id")

// CheckLocale returns nil when tag is a catalogue language (exactly its
// tag: "fr", not "fr-FR" nor "FR"), else ErrUnknownLocale.
func CheckLocale(tag string) error {
	if _, ok := langs[tag]; !ok {
		return ErrUnknownLocale
	}
	return nil
}

// Duration formats a remaining time in whole minutes.
func (l *Lang) Duration(d time.Duration) string {
	m := int64(d / time.Minute)
	if m < 0 {
		m = 0
	}
	if m >= 60 {
		return l.T("duration.hm", "h", m/60, "m", m%60)
	}
	return l.T("duration.m", "m", m)
}

// keys returns every key of the English catalogue, sorted.
func keys() []string {
	var out []string
	for k := range catalogue["en"] {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

package rates

import (
	"context"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
)

// BenchmarkQuote measures Quote over four fresh sources (median of the two
// middle prices, outlier check included).
func BenchmarkQuote(b *testing.B) {
	ps := []*scripted{newScripted("coinbase"), newScripted("kraken"), newScripted("binance"), newScripted("coingecko")}
	for i, v := range []string{"97000.12", "97000.10000", "97020.00000000", "96990.5"} {
		ps[i].set("BTC", v, t0)
	}
	bk := book(BookConfig{}, ps...)
	bk.Refresh(context.Background())
	now := t0.Add(time.Minute)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bk.Quote("BTC", now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAmountFor measures one USD to base-unit conversion.
func BenchmarkAmountFor(b *testing.B) {
	usd, _ := payment.ParseUSD("249.00")
	rate := rat("97000.11")
	b.ReportAllocs()
	for b.Loop() {
		AmountFor(usd, rate, 8, 5)
	}
}

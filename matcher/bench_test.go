package matcher

import (
	"testing"

	"github.com/paywatch/paywatch/payment"
)

func BenchmarkDecide(b *testing.B) {
	in := usdt100()
	cases := []struct {
		name string
		tr   []Transfer
	}{
		{"1transfer", []Transfer{conf(tx(100, early))}},
		{"3transfers", []Transfer{conf(tx(40, early)), conf(tx(60, middle)), tx(100, later)}},
		{"3transfers_unsorted", []Transfer{tx(100, later), conf(tx(60, middle)), conf(tx(40, early))}},
		{"3transfers_one_orphaned", []Transfer{conf(tx(40, early)), conf(tx(60, middle)), orphan(tx(100, later))}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d := Decide(in, c.tr, before)
				if d.Status != payment.IntentPaid {
					b.Fatalf("Status = %q", d.Status)
				}
			}
		})
	}
}

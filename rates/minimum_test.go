package rates

import (
	"math/big"
	"testing"

	"github.com/paywatch/paywatch/payment"
)

func TestMinimumUSDIsTheSmallestAmountAtOrAboveDust(t *testing.T) {
	for _, c := range []struct {
		name              string
		dust              int64
		rate              string
		decimals, display int
		want              payment.Cents
	}{
		{"btc 546 sat at 50000", 546, "50000", 8, 8, 28},
		{"btc 546 sat at 97000.12", 546, "97000.12", 8, 8, 53},
		{"trx 0.1 at 0.25, 2 display decimals", 100000, "0.25", 6, 2, 3},
		{"usdt one cent", 10000, "1", 6, 2, 1},
		{"usdt one cent at 1.0002", 10000, "1.0002", 6, 2, 1},
		{"eth 1 gwei·1000 at 2500", 1e12, "2500", 18, 8, 1},
		{"no dust minimum", 0, "50000", 8, 8, 1},
		{"rounding to display lifts a smaller amount", 5e5, "1", 6, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			rate, _ := new(big.Rat).SetString(c.rate)
			dust := big.NewInt(c.dust)
			got := MinimumUSD(dust, rate, c.decimals, c.display)
			if got != c.want {
				t.Fatalf("MinimumUSD = %s, want %s", got, c.want)
			}
			if a := AmountFor(got, rate, c.decimals, c.display); a.Cmp(dust) < 0 {
				t.Fatalf("the minimum %s buys %s base units, below the dust minimum %d", got, a, c.dust)
			}
			if got > 1 {
				if a := AmountFor(got-1, rate, c.decimals, c.display); a.Cmp(dust) >= 0 {
					t.Fatalf("one cent less (%s) buys %s base units, not below the dust minimum %d", got-1, a, c.dust)
				}
			}
		})
	}
}

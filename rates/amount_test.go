package rates

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/paywatch/paywatch/payment"
)

func TestAmountFor(t *testing.T) {
	for _, tc := range []struct {
		name              string
		usd               string
		rate              string
		decimals, display int
		want              string // base units
	}{
		// 249 / 1.0002 = 248.950209958...: ceil at the 6th decimal.
		{"usdt 249 at 1.0002", "249.00", "1.0002", 6, 6, "248950210"},
		// 100 / 97000.12 = 0.00103092655...: ceil at the 8th decimal.
		{"btc 100", "100.00", "97000.12", 8, 8, "103093"},
		// Same, shown with 5 decimals: 0.00104 BTC.
		{"btc 100 display 5", "100.00", "97000.12", 8, 5, "104000"},
		// Exact quotients are not bumped.
		{"exact", "100.00", "50", 8, 8, "200000000"},
		{"exact display 2", "100.00", "50", 8, 2, "200000000"},
		{"display 0", "249.00", "1.0002", 6, 0, "249000000"},
		{"zero", "0.00", "97000.12", 8, 8, "0"},
		{"one cent of eth", "0.01", "3456.78", 18, 18, "2892865614821"},
		{"eth display 6", "249.00", "3456.78", 18, 6, "72033000000000000"},
		{"sol", "19.99", "180.25", 9, 9, "110901526"},
		{"below par stablecoin", "249.00", "0.9998", 6, 6, "249049810"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			usd, err := payment.ParseUSD(tc.usd)
			if err != nil {
				t.Fatal(err)
			}
			got := AmountFor(usd, rat(tc.rate), tc.decimals, tc.display)
			if got.String() != tc.want {
				t.Fatalf("AmountFor(%s, %s, %d, %d) = %s (%s), want %s", tc.usd, tc.rate, tc.decimals, tc.display,
					got, payment.FormatUnits(got, tc.decimals), tc.want)
			}
			checkAmount(t, usd, rat(tc.rate), tc.decimals, tc.display, got)
		})
	}
}

// checkAmount verifies the defining properties independently of AmountFor's
// formula: the amount is a multiple of the display step, pays at least usd,
// and one step less would not.
func checkAmount(t *testing.T, usd payment.Cents, rate *big.Rat, decimals, display int, amount *big.Int) {
	t.Helper()
	step := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals-display)), nil)
	if new(big.Int).Mod(amount, step).Sign() != 0 {
		t.Fatalf("amount %s is not a multiple of %s", amount, step)
	}
	value := func(units *big.Int) *big.Rat { // USD value of units at rate
		v := new(big.Rat).SetFrac(units, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil))
		return v.Mul(v, rate)
	}
	if value(amount).Cmp(usd.Rat()) < 0 {
		t.Fatalf("amount %s × %s = %s < %s USD: rounded down", amount, rate.RatString(), value(amount).FloatString(12), usd)
	}
	if amount.Sign() > 0 {
		less := new(big.Int).Sub(amount, step)
		if value(less).Cmp(usd.Rat()) >= 0 {
			t.Fatalf("amount %s is not the smallest: %s already pays %s USD", amount, less, usd)
		}
	}
}

func TestAmountForProperty(t *testing.T) {
	seed := uint64(20261130)
	r := rand.New(rand.NewPCG(seed, seed))
	for i := range 20000 {
		usd := payment.Cents(r.Int64N(1_000_000_00) + 1) // up to 1M USD
		// A rate with 1..10 significant digits and 0..8 decimals.
		num := r.Int64N(9_999_999_999) + 1
		rate := new(big.Rat).SetFrac(big.NewInt(num), new(big.Int).Exp(big.NewInt(10), big.NewInt(r.Int64N(9)), nil))
		decimals := []int{6, 8, 9, 18}[r.IntN(4)]
		display := r.IntN(decimals + 1)
		got := AmountFor(usd, rate, decimals, display)
		if i < 3 {
			t.Logf("%s USD at %s, %d/%d decimals: %s", usd, rate.FloatString(8), decimals, display, payment.FormatUnits(got, decimals))
		}
		checkAmount(t, usd, rate, decimals, display, got)
	}
}

func TestAmountForPanicsOnProgrammingErrors(t *testing.T) {
	for name, f := range map[string]func(){
		"zero rate":       func() { AmountFor(100, new(big.Rat), 8, 8) },
		"negative rate":   func() { AmountFor(100, big.NewRat(-1, 1), 8, 8) },
		"nil rate":        func() { AmountFor(100, nil, 8, 8) },
		"display > dec":   func() { AmountFor(100, big.NewRat(1, 1), 6, 7) },
		"negative disp":   func() { AmountFor(100, big.NewRat(1, 1), 6, -1) },
		"negative amount": func() { AmountFor(-1, big.NewRat(1, 1), 6, 6) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func ExampleAmountFor() {
	usd, _ := payment.ParseUSD("100.00")
	rate, _ := new(big.Rat).SetString("97000.12")
	btc := payment.MustMethod(payment.BTC)
	exact := AmountFor(usd, rate, btc.Decimals, btc.Decimals)
	typed := AmountFor(usd, rate, btc.Decimals, 5)
	fmt.Println(payment.FormatUnits(exact, btc.Decimals), payment.TrimUnits(typed, btc.Decimals))
	// Output: 0.00103093 0.00104
}

package config_test

import (
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
)

// A schedule robfig/cron cannot parse, or one that never fires, is refused
// when the file is loaded, naming its key: not when the daemon first runs
// the loop (the deadline sweep used to parse expiry_sweep in its goroutine,
// and rates.refresh was only checked to be non-empty).
func TestUnparsableSchedulesAreRefusedAtLoad(t *testing.T) {
	for _, tc := range []struct{ name, yaml, key string }{
		{"bad expiry_sweep", "expiry_sweep: \"every ten seconds\"\n", "expiry_sweep"},
		{"empty expiry_sweep", "expiry_sweep: \"\"\n", "expiry_sweep"},
		{"expiry_sweep that never fires", "expiry_sweep: \"0 0 30 2 *\"\n", "expiry_sweep"},
		{"bad reconcile schedule", "reconcile:\n  schedule: \"hourly\"\n", "reconcile.schedule"},
		{"reconcile schedule that never fires", "reconcile:\n  schedule: \"0 0 31 4 *\"\n", "reconcile.schedule"},
		{"bad rates refresh", "rates:\n  refresh: \"30s\"\n", "rates.refresh"},
		{"rates refresh of six fields", "rates:\n  refresh: \"*/5 * * * * *\"\n", "rates.refresh"},
		{"rates refresh that never fires", "rates:\n  refresh: \"0 0 30 2 *\"\n", "rates.refresh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "paywatch.yaml")
			if err := os.WriteFile(path, []byte("database_url: postgres://u@127.0.0.1/pw\n"+tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := config.Load(path)
			if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), tc.key+":") {
				t.Fatalf("Load: %v, want ErrInvalid naming %s", err, tc.key)
			}
		})
	}
}

// Load resolves every value callers used to parse again (amounts in cents
// and base units, schedules, the deviation bound), and those are what the
// file says.
func TestLoadResolvesWhatCallersUsedToParse(t *testing.T) {
	t.Setenv("PAYWATCH_DATABASE_URL", "postgres://u@127.0.0.1/pw")
	c, err := config.Load("paywatch.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 3, 14, 20, 7, 0, time.Local)
	if got := c.Topups(); !reflect.DeepEqual(got, []payment.Cents{10000, 50000, 200000, 1000000}) {
		t.Errorf("topups %v", got)
	}
	if got := c.SweepSchedule().Next(at); !got.Equal(at.Add(10 * time.Second)) {
		t.Errorf("expiry_sweep next %v", got)
	}
	if got := c.Rates.RefreshSchedule().Next(at); !got.Equal(at.Add(30 * time.Second)) {
		t.Errorf("rates.refresh next %v", got)
	}
	if got := c.Reconcile.CronSchedule().Next(at); !got.Equal(time.Date(2026, 12, 3, 15, 0, 0, 0, time.Local)) {
		t.Errorf("reconcile.schedule (@hourly) next %v", got)
	}
	if got := c.Rates.MaxDeviationFraction(); got.Cmp(big.NewRat(2, 100)) != 0 {
		t.Errorf("rates.max_deviation %v", got)
	}
	if got := c.Finance.MaxOverrideCredit(); got != 10000 {
		t.Errorf("finance.max_override_credit_usd %d cents", got)
	}
	for m, dust := range map[payment.Method]int64{payment.BTC: 546, payment.LTC: 546, payment.ETH: 1_000_000_000_000,
		payment.USDTERC20: 10_000, payment.USDCERC20: 10_000, payment.TRX: 100_000, payment.USDTTRC20: 10_000, payment.SOL: 10_000} {
		mc := c.Methods[m]
		if got := mc.Dust(); got.Cmp(big.NewInt(dust)) != 0 {
			t.Errorf("methods.%s.dust_min %v base units, want %d", m, got, dust)
		}
		if got := mc.Tolerance(); got.Sign() != 0 {
			t.Errorf("methods.%s.underpayment_tolerance %v", m, got)
		}
		if _, on := mc.LargeAmount(); on {
			t.Errorf("methods.%s.large_amount_usd is on", m)
		}
	}
	// A caller may change what it is given without changing the config.
	c.Methods[payment.BTC].Dust().SetInt64(1)
	c.Rates.MaxDeviationFraction().SetInt64(1)
	if c.Methods[payment.BTC].Dust().Int64() != 546 || c.Rates.MaxDeviationFraction().Cmp(big.NewRat(1, 50)) != 0 {
		t.Fatal("a resolved value is shared with the caller")
	}

	// Values other than the defaults, in the example's shape.
	raw, err := os.ReadFile("paywatch.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	y := strings.NewReplacer(
		"    large_amount_usd: \"\"\n    large_confirmations: 6\n    underpayment_tolerance: \"0\"\n    display_decimals: 8\n    dust_min: \"0.00000546\"",
		"    large_amount_usd: \"2500.50\"\n    large_confirmations: 6\n    underpayment_tolerance: \"0.000001\"\n    display_decimals: 8\n    dust_min: \"0.0000100\"",
		`expiry_sweep: "@every 10s"`, `expiry_sweep: "*/2 * * * *"`,
		`refresh: "@every 30s"`, `refresh: "@every 1m30s"`,
		`schedule: "@hourly"`, `schedule: "15 3 * * *"`,
		`max_deviation: "0.02"`, `max_deviation: "0.015"`,
		`max_override_credit_usd: "100.00"`, `max_override_credit_usd: "0.5"`,
		`topup_amounts: ["100.00", "500.00", "2000.00", "10000.00"]`, `topup_amounts: ["19.99", "5"]`,
		"\ntrusted_proxies: []", "\ntrusted_proxies: [\"10.1.2.3\", \"192.168.7.9/16\"]",
		"  trusted_proxies: []", "  trusted_proxies: [\"fd00::1\", \"172.16.0.0/12\"]",
		"  static: {}", "  static: {BTC: \"97000.12\", USDT: \"0.9998\"}",
	).Replace(string(raw))
	path := filepath.Join(t.TempDir(), "paywatch.yaml")
	if err := os.WriteFile(path, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Topups(); !reflect.DeepEqual(got, []payment.Cents{1999, 500}) {
		t.Errorf("topups %v", got)
	}
	if got := c.SweepSchedule().Next(at); !got.Equal(time.Date(2026, 12, 3, 14, 22, 0, 0, time.Local)) {
		t.Errorf("expiry_sweep next %v", got)
	}
	if got := c.Rates.RefreshSchedule().Next(at); !got.Equal(at.Add(90 * time.Second)) {
		t.Errorf("rates.refresh next %v", got)
	}
	if got := c.Reconcile.CronSchedule().Next(at); !got.Equal(time.Date(2026, 12, 4, 3, 15, 0, 0, time.Local)) {
		t.Errorf("reconcile.schedule next %v", got)
	}
	if got := c.Rates.MaxDeviationFraction(); got.Cmp(big.NewRat(15, 1000)) != 0 {
		t.Errorf("rates.max_deviation %v", got)
	}
	if got := c.Finance.MaxOverrideCredit(); got != 50 {
		t.Errorf("finance.max_override_credit_usd %d cents", got)
	}
	btc := c.Methods[payment.BTC]
	if large, on := btc.LargeAmount(); !on || large != 250050 {
		t.Errorf("methods.BTC.large_amount_usd %d cents (on %v)", large, on)
	}
	if btc.Tolerance().Int64() != 100 || btc.Dust().Int64() != 1000 {
		t.Errorf("methods.BTC tolerance %v, dust %v base units", btc.Tolerance(), btc.Dust())
	}
	if c.MethodConfirmations(payment.BTC, 250049) != 2 || c.MethodConfirmations(payment.BTC, 250050) != 6 {
		t.Errorf("confirmations around the large amount")
	}
	if _, on := c.Methods[payment.LTC].LargeAmount(); on {
		t.Errorf("methods.LTC.large_amount_usd is on")
	}
	if got := c.Rates.StaticPrices(); len(got) != 2 || got["BTC"].Cmp(big.NewRat(9700012, 100)) != 0 || got["USDT"].Cmp(big.NewRat(9998, 10000)) != 0 {
		t.Errorf("rates.static %v", got)
	}
	if got := fmt.Sprint(c.Proxies()); got != "[10.1.2.3/32 192.168.0.0/16]" {
		t.Errorf("trusted_proxies %s", got)
	}
	if got := fmt.Sprint(c.Checkout.Proxies()); got != "[fd00::1/128 172.16.0.0/12]" {
		t.Errorf("checkout.trusted_proxies %s", got)
	}
}

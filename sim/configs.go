package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/payment"
)

// methodConfig is one method's generated settings.
type methodConfig struct {
	confirmations, largeConfirmations int
	largeUSD, tolerance, dust         string
}

// histConfig is a history's generated config: per method confirmations,
// a large-payment threshold and its depth, tolerance and dust minimum, and
// the deadline, at and near the edges of what validation accepts (and
// sometimes past them: a refused config is logged and the history runs on
// the defaults, simConfig's).
type histConfig struct {
	deadline time.Duration
	methods  map[payment.Method]methodConfig
	// openCap is limits.open_intents_per_payable (0: no cap).
	openCap int
}

// genConfig draws a history's config from its seed.
func genConfig(seed uint64) histConfig {
	r := rand.New(rand.NewPCG(seed, 0xc0f1))
	hc := histConfig{methods: map[payment.Method]methodConfig{}}
	hc.deadline = []time.Duration{30 * time.Minute, time.Minute, 5 * time.Minute, 59 * time.Second, 2 * time.Hour}[r.IntN(5)]
	for _, m := range payment.Methods {
		mc := methodConfig{confirmations: confirmations[m.Method], tolerance: "0", dust: ""}
		switch m.Network {
		case payment.Bitcoin, payment.Litecoin:
			mc.confirmations = []int{1, 2, 3, 0}[r.IntN(4)] // 0 is refused: no finality
		case payment.Ethereum:
			mc.confirmations = []int{0, 1, 2, 3}[r.IntN(4)] // 0 is finality
		}
		if r.IntN(3) == 0 {
			mc.largeUSD = []string{"100.00", "250.00", "0.02", "1000000.00"}[r.IntN(4)]
			mc.largeConfirmations = []int{0, 1, 3, 4}[r.IntN(4)]
		}
		unit := "0." + strings.Repeat("0", m.Decimals-1) + "1" // one base unit
		switch r.IntN(4) {
		case 1:
			mc.tolerance = unit
		case 2:
			mc.tolerance = "0." + strings.Repeat("0", m.Decimals-3) + "123"
		}
		switch r.IntN(4) {
		case 1:
			mc.dust = "0"
		case 2:
			mc.dust = unit
		case 3:
			// Near the smallest amounts the history asks for.
			mc.dust = "0." + strings.Repeat("0", m.Decimals-4) + "1"
		}
		hc.methods[m.Method] = mc
	}
	// Drawn last, so the draws above stay those of earlier seeds. A
	// payable of the simulator has at most 3 methods on one network, and
	// renewals: 1 and 2 refuse, 4 and none only past renewals.
	hc.openCap = []int{4, 1, 2, 0}[r.IntN(4)]
	return hc
}

// apply writes hc over c (which already holds the simulator's settings).
func (hc histConfig) apply(c *config.Config) {
	c.Deadline = config.Duration{Duration: hc.deadline}
	c.Limits.OpenIntentsPerPayable = hc.openCap
	for m, mc := range hc.methods {
		x := c.Methods[m]
		k, lk := mc.confirmations, mc.largeConfirmations
		x.Confirmations = &k
		x.LargeAmountUSD, x.LargeConfirmations = mc.largeUSD, nil
		if mc.largeUSD != "" {
			x.LargeConfirmations = &lk
		}
		x.UnderpaymentTolerance = mc.tolerance
		if mc.dust != "" {
			x.DustMin = mc.dust
		}
	}
}

func (hc histConfig) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "deadline %s; open intents per payable %d;", hc.deadline, hc.openCap)
	for _, m := range payment.Methods {
		mc := hc.methods[m.Method]
		fmt.Fprintf(&b, " %s conf %d", m.Method, mc.confirmations)
		if mc.largeUSD != "" {
			fmt.Fprintf(&b, " (%d above %s USD)", mc.largeConfirmations, mc.largeUSD)
		}
		if mc.tolerance != "0" {
			fmt.Fprintf(&b, " tol %s", mc.tolerance)
		}
		if mc.dust != "" {
			fmt.Fprintf(&b, " dust %s", mc.dust)
		}
		b.WriteString(";")
	}
	return b.String()
}

// useConfig sets the world's config to the history's (or the defaults when
// validation refuses it) and restarts the service on it. It returns
// whether the generated config was accepted.
func (r *run) useConfig() bool {
	c := r.w.e.Config
	r.w.base.apply(c)
	hc := genConfig(r.h.Seed)
	hc.apply(c)
	accepted := true
	if err := c.Validate(); err != nil {
		r.trace = append(r.trace, fmt.Sprintf("config refused (%v): the defaults instead", err))
		r.w.base.apply(c)
		accepted = false
		if err := c.Validate(); err != nil {
			r.violate("harness", "default config: %v", err)
		}
	} else {
		r.trace = append(r.trace, "config "+hc.String())
	}
	r.w.e.RestartService()
	return accepted
}

package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/paywatch/paywatch/payment"
)

// Kind is one generator action.
type Kind int

// The generator's actions. Each takes its parameters from an Action's A-D,
// resolved against the history's state when it runs (an intent is "intent
// number A modulo the intents created so far"), so that dropping steps while
// shrinking leaves a valid history.
const (
	Create         Kind = iota // an order or top-up intent, any method, several per payable; sometimes with an Idempotency-Key
	Replay                     // an idempotent request sent again with its key and body (during an outage too)
	Report                     // the customer says "I have paid"
	Renew                      // renew an intent (valid or not)
	Sweep                      // the deadline sweep
	Clock                      // the clock jumps forward
	Pay                        // a transfer: exact, partial, over, dust, wrong asset, unknown address, two outputs; broadcast or mined directly
	Evict                      // a mempool transaction is evicted
	ReplaceTx                  // a mempool transaction is replaced by another (other txid, amount)
	Mine                       // blocks are mined, their timestamps on time, lagging or leading
	Reorg                      // a reorg of depth 1 … safety_depth+1 that drops, keeps or re-orders transactions
	Lag                        // the node lags (reports a lower tip), or catches up
	Fault                      // fetch errors at the next heights, an outage, or all cleared
	Skip                       // a skipped slot (Solana)
	Debit                      // a balance debit of an order; sometimes two at once
	Resolve                    // a finance decision (all four, valid and invalid) on a random transfer
	Rescan                     // an operator rescan, valid or invalid
	Scan                       // a network's scanner steps until caught up (or an error)
	RestartScanner             // a scanner restarts
	RestartService             // the service (and every scanner) restarts
	Kill                       // a scan whose batch commit fails, then a restart
	RoundTrip                  // blocks taken away and the same transactions mined back (issue 21)
	LoseTransfer               // a recorded transfer is deleted behind paywatch's back; the reconciler must find it (issue 27)
	Hang                       // the leading instance freezes before a write, its lease expires, a standby takes over (issue 32 item 6)
	Wake                       // the frozen instance goes on with what it read; it must write nothing
	Remine                     // a reorg mines the dropped transactions again at other positions in other blocks, re-executed: the same, another amount, or paying nothing (issue 32)
	numKinds
)

var kindNames = [...]string{"create", "replay", "report", "renew", "sweep", "clock", "pay", "evict", "replace", "mine",
	"reorg", "lag", "fault", "skip", "debit", "resolve", "rescan", "scan", "restart-scanner", "restart-service", "kill", "round-trip", "lose-transfer", "hang", "wake", "remine"}

func (k Kind) String() string { return kindNames[k] }

// ParseKind returns the kind named s.
func ParseKind(s string) (Kind, bool) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), true
		}
	}
	return 0, false
}

// weights of the actions in a generated history.
var weights = [numKinds]int{
	Create: 14, Replay: 3, Report: 2, Renew: 3, Sweep: 3, Clock: 5, Pay: 16, Evict: 3, ReplaceTx: 2, Mine: 14,
	Reorg: 5, Lag: 2, Fault: 3, Skip: 1, Debit: 5, Resolve: 7, Rescan: 2, Scan: 16, RestartScanner: 1,
	RestartService: 1, Kill: 2, RoundTrip: 6, LoseTransfer: 2, Hang: 2, Wake: 2, Remine: 4,
}

// Action is one step of a history.
type Action struct {
	Kind Kind
	// I is the step's index in the generated history (kept by shrinking).
	I          int
	Net        int // index into History.Nets
	A, B, C, D int
}

// History is what a seed generates: the networks it uses and its steps.
type History struct {
	Seed    uint64
	Nets    []payment.Network
	Actions []Action
}

// Generate returns the history of seed with steps actions.
func Generate(seed uint64, steps int, disabled map[Kind]bool) History {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	all := append([]payment.Network(nil), payment.Networks...)
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	h := History{Seed: seed, Nets: all[:1+r.IntN(2)]}
	total := 0
	for k, wt := range weights {
		if !disabled[Kind(k)] {
			total += wt
		}
	}
	for len(h.Actions) < steps {
		x := r.IntN(total)
		k := Kind(0)
		for ; k < numKinds; k++ {
			if disabled[k] {
				continue
			}
			if x < weights[k] {
				break
			}
			x -= weights[k]
		}
		h.Actions = append(h.Actions, Action{Kind: k, I: len(h.Actions), Net: r.IntN(len(h.Nets)), A: r.IntN(1 << 20), B: r.IntN(1 << 20),
			C: r.IntN(1 << 20), D: r.IntN(1 << 20)})
	}
	return h
}

// Without returns h with the steps at the given indexes left out.
func (h History) Without(drop map[int]bool) History {
	out := History{Seed: h.Seed, Nets: h.Nets}
	for i, a := range h.Actions {
		if !drop[i] {
			out.Actions = append(out.Actions, a)
		}
	}
	return out
}

// Only returns h with only the steps at the given indexes.
func (h History) Only(keep []int) History {
	out := History{Seed: h.Seed, Nets: h.Nets}
	for _, i := range keep {
		if i >= 0 && i < len(h.Actions) {
			out.Actions = append(out.Actions, h.Actions[i])
		}
	}
	return out
}

func (a Action) String() string {
	return fmt.Sprintf("%s net=%d a=%d b=%d c=%d d=%d", a.Kind, a.Net, a.A, a.B, a.C, a.D)
}

func netsString(ns []payment.Network) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = string(n)
	}
	return strings.Join(s, ",")
}

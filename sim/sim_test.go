package sim

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paywatch/paywatch/payment"
)

var (
	seedFlag      = flag.Uint64("seed", 0, "replay the history of this seed (0: run many)")
	historiesFlag = flag.Int("histories", 2000, "histories to run (unless -duration)")
	durationFlag  = flag.Duration("duration", 0, "run histories for this long instead of -histories")
	stepsFlag     = flag.Int("steps", 12, "steps per history")
	workersFlag   = flag.Int("workers", 3, "histories run at once (one database each)")
	firstFlag     = flag.Uint64("first", 1, "first seed")
	onlyFlag      = flag.String("only", "", "with -seed: run only these steps (comma-separated indexes, as a shrunk trace prints)")
	disableFlag   = flag.String("disable", "", "generator actions left out (comma-separated names); for CI only while a finding is open, see sim-findings")
	shrinkFlag    = flag.Bool("shrink", true, "shrink a failing history to fewer steps")
	allFlag       = flag.Bool("all", false, "keep going after a failing history: report one shrunk example per broken invariant")
	noRebuildFlag = flag.Bool("no-rebuild", false, "skip the rebuild at the end of every history")
	noFenceFlag   = flag.Bool("no-fence", false, "the scanners write without their lease's fence: to see what a hang does without it, never in CI")
	blockKeysFlag = flag.String("block-keys", "", "networks (comma-separated) whose simulated decoder keys token transfers by block log position, as chains/evm did before issue 32 item 1: reproduces that bug, never in CI")
	ignoreFlag    = flag.String("ignore", "", "invariants (comma-separated indexes into sim.Invariants) not to report: to look past one broken invariant, never in CI")
)

func disabledKinds(t *testing.T) map[Kind]bool {
	out := map[Kind]bool{}
	for _, s := range strings.Split(*disableFlag, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		k, ok := ParseKind(s)
		if !ok {
			t.Fatalf("-disable: unknown action %q", s)
		}
		out[k] = true
	}
	if len(out) > 0 {
		t.Logf("generator actions disabled: %s", *disableFlag)
	}
	return out
}

// TestSim runs generated histories (or replays one with -seed) and fails
// with the seed, the replay command and the trace of the first history
// that breaks an invariant.
func TestSim(t *testing.T) {
	// Memory is plenty and the collector's work competes with PostgreSQL
	// for the machine's cores: collect four times less often.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	rebuildEnabled = !*noRebuildFlag
	fenceWrites = !*noFenceFlag
	for _, x := range strings.Split(*blockKeysFlag, ",") {
		if x = strings.TrimSpace(x); x != "" {
			blockKeyed[payment.Network(x)] = true
		}
	}
	for _, x := range strings.Split(*ignoreFlag, ",") {
		if x = strings.TrimSpace(x); x == "" {
			continue
		}
		i, err := strconv.Atoi(x)
		if err != nil || i < 0 || i >= len(Invariants) {
			t.Fatalf("-ignore: %q is not an invariant index", x)
		}
		ignored[Invariants[i]] = true
		t.Logf("not reporting: %s", Invariants[i])
	}
	disabled := disabledKinds(t)
	if *seedFlag != 0 {
		w := newWorld(t)
		h := Generate(*seedFlag, *stepsFlag, disabled)
		if *onlyFlag != "" {
			var keep []int
			for _, s := range strings.Split(*onlyFlag, ",") {
				i, err := strconv.Atoi(strings.TrimSpace(s))
				if err != nil {
					t.Fatalf("-only: %v", err)
				}
				keep = append(keep, i)
			}
			h = h.Only(keep)
		}
		viol, trace := Run(w, h)
		t.Logf("trace:\n%s", strings.Join(trace, "\n"))
		if len(viol) > 0 {
			report(t, w, h, viol, trace, disabled)
		}
		return
	}
	workers := max(1, *workersFlag)
	var next atomic.Uint64
	next.Store(*firstFlag)
	var done atomic.Int64
	var failed atomic.Bool
	var mu sync.Mutex
	seen, counts := map[string]bool{}, map[string]int{}
	start := time.Now()
	deadline := time.Time{}
	if *durationFlag > 0 {
		deadline = start.Add(*durationFlag)
	}
	last := *firstFlag + uint64(*historiesFlag)
	// The workers are goroutines, not parallel subtests: -test.parallel
	// (GOMAXPROCS by default, 2 here) would run only that many at once.
	worlds := make([]*world, workers)
	for i := range worlds {
		worlds[i] = newWorld(t)
	}
	var wg sync.WaitGroup
	for _, w := range worlds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				seed := next.Add(1) - 1
				if deadline.IsZero() && seed >= last || !deadline.IsZero() && time.Now().After(deadline) {
					return
				}
				h := Generate(seed, *stepsFlag, disabled)
				viol, trace := Run(w, h)
				done.Add(1)
				if len(viol) > 0 && *allFlag {
					mu.Lock()
					first := !seen[viol[0].Invariant]
					seen[viol[0].Invariant] = true
					counts[viol[0].Invariant]++
					mu.Unlock()
					if first {
						report(t, w, h, viol, trace, disabled)
					}
					continue
				}
				if len(viol) > 0 && !failed.Swap(true) {
					mu.Lock()
					report(t, w, h, viol, trace, disabled)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	for inv, n := range counts {
		t.Logf("%4d histories broke: %s", n, inv)
	}
	t.Logf("%d histories of %d steps in %s: %.1f histories/s (%d workers)", done.Load(), *stepsFlag, el.Round(time.Millisecond),
		float64(done.Load())/el.Seconds(), workers)
}

// report shrinks a failing history (drops steps while the same invariant
// still breaks) and fails the test with the seed, the replay command and
// the trace.
func report(t testing.TB, w *world, h History, viol []Violation, trace []string, disabled map[Kind]bool) {
	t.Helper()
	inv := viol[0].Invariant
	kept := make([]int, len(h.Actions))
	for i := range kept {
		kept[i] = i
	}
	if *shrinkFlag && *onlyFlag == "" {
		// The steps after the failing one never ran.
		if viol[0].Step > 0 && viol[0].Step < len(kept) {
			kept = kept[:viol[0].Step]
		}
		for changed := true; changed; {
			changed = false
			for i := len(kept) - 1; i >= 0; i-- {
				try := append(append([]int(nil), kept[:i]...), kept[i+1:]...)
				v, tr := Run(w, h.Only(try))
				if len(v) > 0 && v[0].Invariant == inv {
					kept, viol, trace, changed = try, v, tr, true
				}
			}
		}
	}
	var dis string
	if *disableFlag != "" {
		dis = " -disable " + *disableFlag
	}
	idx := make([]string, len(kept))
	for i, k := range kept {
		idx[i] = strconv.Itoa(h.Actions[k].I)
	}
	msg := fmt.Sprintf("VIOLATION seed=%d: %s\nreplay: go test ./sim -run TestSim -seed %d -steps %d%s -v\nshrunk to %d steps: go test ./sim -run TestSim -seed %d -steps %d%s -only %s -v\ntrace:\n%s",
		h.Seed, viol[0], h.Seed, *stepsFlag, dis, len(kept), h.Seed, *stepsFlag, dis, strings.Join(idx, ","), strings.Join(trace, "\n"))
	if f := os.Getenv("SIM_FINDINGS"); f != "" {
		if fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(fh, "\n---\n%s\n", msg)
			fh.Close()
		}
	}
	t.Error(msg)
}

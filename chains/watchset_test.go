package chains_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/paywatch/paywatch/chains"
)

// edgeKeys are keys a hash table gets wrong first: all-zero and all-0xff
// keys of every network's widths, keys that differ only in their last byte
// or only in their first, and the empty and over-wide keys.
func edgeKeys() [][]byte {
	var out [][]byte
	for _, w := range []int{20, 22, 25, 32, 34} {
		out = append(out, make([]byte, w), bytes.Repeat([]byte{0xff}, w))
		for i := range 4 {
			k := bytes.Repeat([]byte{0xab}, w)
			k[w-1] = byte(i)
			out = append(out, k)
			k = bytes.Repeat([]byte{0xab}, w)
			k[0] = byte(i)
			out = append(out, k)
		}
	}
	return append(out, []byte{}, bytes.Repeat([]byte{7}, 65), []byte{0})
}

func randKey(r *rand.Rand) []byte {
	widths := []int{20, 22, 32, 34}
	k := make([]byte, widths[r.IntN(len(widths))])
	for i := range k {
		k[i] = byte(r.Uint32())
	}
	// Half the scripts share a P2WPKH/P2WSH-like prefix, as real ones do.
	if r.IntN(2) == 0 {
		k[0], k[1] = 0, byte(len(k)-2)
	}
	return k
}

// TestWatchSetMatchesMap adds random and edge keys in batches, growing every
// table several times, and after each batch checks the set against a map on
// every added key, on its one-bit-off neighbours and on fresh random keys.
func TestWatchSetMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	set := chains.NewWatchSet(10)
	want := map[string]bool{}
	var added [][]byte
	check := func(k []byte) {
		t.Helper()
		if got := set.Contains(k); got != want[string(k)] {
			t.Fatalf("Contains(%x) = %v, want %v (after %d keys)", k, got, want[string(k)], len(want))
		}
	}
	for round := range 6 {
		var batch [][]byte
		for range 500 << round {
			batch = append(batch, randKey(r))
		}
		if round == 2 {
			batch = append(batch, edgeKeys()...)
		}
		// A key twice in one batch and a key added in an earlier batch.
		batch = append(batch, batch[0])
		if len(added) > 0 {
			batch = append(batch, added[r.IntN(len(added))])
		}
		set.Add(batch...)
		for _, k := range batch {
			want[string(k)] = true
			added = append(added, k)
		}
		if set.Len() != len(want) {
			t.Fatalf("Len = %d, want %d", set.Len(), len(want))
		}
		for _, k := range added {
			check(k)
			if len(k) > 0 {
				near := bytes.Clone(k)
				near[len(near)-1] ^= 1
				check(near)
				check(k[:len(k)-1])
			}
		}
		for range 2000 {
			check(randKey(r))
		}
		for _, k := range edgeKeys() {
			check(k)
		}
		// The same questions in batches of every length up to a few
		// chunks, mixed: added keys, their neighbours, random and edge keys.
		var asked [][]byte
		for _, k := range added[max(0, len(added)-300):] {
			asked = append(asked, k, k[:max(0, len(k)-1)])
		}
		for range 300 {
			asked = append(asked, randKey(r))
		}
		asked = append(asked, edgeKeys()...)
		r.Shuffle(len(asked), func(i, j int) { asked[i], asked[j] = asked[j], asked[i] })
		for from := 0; from < len(asked); {
			n := min(len(asked)-from, r.IntN(70))
			batch := asked[from : from+n]
			out := make([]bool, n+1)
			out[n] = true // past the batch: left alone
			set.ContainsBatch(batch, out)
			for i, k := range batch {
				if out[i] != want[string(k)] {
					t.Fatalf("ContainsBatch: key %d of %d (%x) = %v, want %v", i, n, k, out[i], want[string(k)])
				}
			}
			if !out[n] {
				t.Fatal("ContainsBatch wrote past its keys")
			}
			from += n
		}
	}
	keys := set.Keys()
	if len(keys) != len(want) {
		t.Fatalf("Keys: %d keys, want %d", len(keys), len(want))
	}
	for _, k := range keys {
		if !want[string(k)] {
			t.Fatalf("Keys returned %x, never added", k)
		}
	}
}

// mapWatched is a Watched without ContainsBatch.
type mapWatched map[string]bool

func (m mapWatched) Contains(k []byte) bool { return m[string(k)] }

// TestContainsEach: the batch answers are Contains' answers, through a set
// with ContainsBatch and through one without.
func TestContainsEach(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	set := chains.NewWatchSet(10)
	m := mapWatched{}
	var keys [][]byte
	for i := range 200 {
		k := randKey(r)
		keys = append(keys, k)
		if i%3 == 0 {
			set.Add(k)
			m[string(k)] = true
		}
	}
	for _, w := range []chains.Watched{set, m} {
		out := make([]bool, len(keys))
		chains.ContainsEach(w, keys, out)
		hits := 0
		for i, k := range keys {
			if out[i] != m[string(k)] {
				t.Fatalf("%T: ContainsEach: key %d = %v, want %v", w, i, out[i], m[string(k)])
			}
			hits += b2i(out[i])
		}
		if hits != len(m) {
			t.Fatalf("%T: %d hits, want %d", w, hits, len(m))
		}
	}
}

// TestPrefetchedAnswersAsTheSet: asked in collection order with skips,
// out of order, twice, or about a key never collected, Prefetched answers
// what the set answers.
func TestPrefetchedAnswersAsTheSet(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	set := chains.NewWatchSet(10)
	var keys [][]byte
	for i := range 100 {
		k := randKey(r)
		keys = append(keys, k)
		if i%4 == 0 {
			set.Add(k)
		}
	}
	p := chains.Prefetch(set, keys)
	var asked [][]byte
	for i, k := range keys {
		switch i % 5 {
		case 0, 1, 3:
			asked = append(asked, k)
		case 2: // skipped
		case 4:
			asked = append(asked, keys[i/2], randKey(r), k, k)
		}
	}
	hits := 0
	for _, k := range asked {
		got, want := p.Contains(k), set.Contains(k)
		if got != want {
			t.Fatalf("Prefetched.Contains(%x) = %v, the set says %v", k, got, want)
		}
		hits += b2i(got)
	}
	if hits == 0 {
		t.Fatal("no hit asked: the test checks nothing")
	}
	// A key added after the batch is still found through the set when it
	// was never collected.
	late := randKey(r)
	set.Add(late)
	if !p.Contains(late) {
		t.Fatal("a key never collected is not asked of the set")
	}
}

// TestWatchSetKeysAreCopies: a caller changing what Keys returned, or the
// slice it passed to Add, changes nothing in the set.
func TestWatchSetKeysAreCopies(t *testing.T) {
	k := bytes.Repeat([]byte{1}, 22)
	set := chains.NewWatchSet(1)
	set.Add(k)
	k[0] = 9
	got := set.Keys()
	got[0][1] = 9
	if !set.Contains(bytes.Repeat([]byte{1}, 22)) || set.Contains(k) || set.Contains(got[0]) {
		t.Fatalf("set changed through a caller's slice: %x", set.Keys())
	}
}

func TestWatchSetContainsDoesNotAllocate(t *testing.T) {
	set := chains.NewWatchSet(100)
	r := rand.New(rand.NewPCG(3, 4))
	var keys [][]byte
	for range 100 {
		keys = append(keys, randKey(r))
	}
	set.Add(keys...)
	miss := randKey(r)
	allocs := testing.AllocsPerRun(100, func() {
		for _, k := range keys {
			if !set.Contains(k) {
				t.Fatal("added key missing")
			}
		}
		set.Contains(miss)
	})
	if allocs != 0 {
		t.Fatalf("Contains allocated %v times per run", allocs)
	}
	out := make([]bool, len(keys))
	allocs = testing.AllocsPerRun(100, func() { set.ContainsBatch(keys, out) })
	if allocs != 0 {
		t.Fatalf("ContainsBatch allocated %v times per run", allocs)
	}
}

// TestWatchSetConcurrentAddAndContains runs the refresher's Adds (growing
// the tables) against scanners' lookups; run under -race. A key once seen
// stays seen, and every key is there at the end.
func TestWatchSetConcurrentAddAndContains(t *testing.T) {
	set := chains.NewWatchSet(1)
	r := rand.New(rand.NewPCG(5, 6))
	var keys [][]byte
	for range 20000 {
		keys = append(keys, randKey(r))
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for c := range slices.Chunk(keys, 100) {
			set.Add(c...)
		}
	}()
	errs := make(chan error, 3)
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seen := make([]bool, len(keys))
			out := make([]bool, len(keys))
			for pass := 0; pass < 20; pass++ {
				if g == 2 {
					// Batch lookups, in chunks that straddle the Adds.
					for c := 0; c < len(keys); c += 37 {
						n := min(37, len(keys)-c)
						set.ContainsBatch(keys[c:c+n], out[c:c+n])
					}
				}
				for i := g; i < len(keys); i += 3 {
					ok := out[i]
					if g != 2 {
						ok = set.Contains(keys[i])
					}
					if seen[i] && !ok {
						errs <- fmt.Errorf("reader %d: key %d seen, then missing", g, i)
						return
					}
					seen[i] = ok
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, k := range keys {
		if !set.Contains(k) {
			t.Fatalf("key %d missing after all adds", i)
		}
	}
}

// BenchmarkWatchSetContains measures lookups in a set of one million
// 22-byte scripts: hits, and misses (what almost every output of a block
// is), against the map of strings it replaced. Its 1M and 10M groups
// measure single and batch lookups where neither the set nor the probes
// fit in a cache (benchmarkLookups).
func BenchmarkWatchSetContains(b *testing.B) {
	const n = 1_000_000
	r := rand.New(rand.NewPCG(7, 8))
	set := chains.NewWatchSet(n)
	keys := make([][]byte, 0, n)
	for range n {
		k := make([]byte, 22)
		for i := range k {
			k[i] = byte(r.Uint32())
		}
		k[0], k[1] = 0, 20
		keys = append(keys, k)
	}
	for c := range slices.Chunk(keys, 10000) {
		set.Add(c...)
	}
	misses := make([][]byte, 4096)
	for i := range misses {
		m := bytes.Clone(keys[r.IntN(n)])
		m[21] ^= 0x5a
		misses[i] = m
	}
	b.Run("hit", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if !set.Contains(keys[i]) {
				b.Fatal("miss")
			}
			if i++; i == n {
				i = 0
			}
		}
	})
	// The map of strings this set replaced, as the ratio's other side.
	old := make(map[string]struct{}, n)
	for _, k := range keys {
		old[string(k)] = struct{}{}
	}
	b.Run("map-hit", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, ok := old[string(keys[i])]; !ok {
				b.Fatal("miss")
			}
			if i++; i == n {
				i = 0
			}
		}
	})
	b.Run("map-miss", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, ok := old[string(misses[i&4095])]; ok {
				b.Fatal("hit")
			}
			i++
		}
	})
	b.Run("miss", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if set.Contains(misses[i&4095]) {
				b.Fatal("hit")
			}
			i++
		}
	})
	keys, old = nil, nil
	b.Run("1M", func(b *testing.B) { benchmarkSized(b, 1_000_000) })
	b.Run("10M", func(b *testing.B) { benchmarkSized(b, 10_000_000) })
}

// benchmarkSized builds a set of n random 22-byte scripts (one flat slice,
// so the benchmark's own memory is read sequentially) and a million random
// scripts that are not in it, then runs benchmarkLookups.
func benchmarkSized(b *testing.B, n int) {
	const w, m = 22, 1 << 20
	r := rand.New(rand.NewPCG(9, uint64(n)))
	script := func(k []byte) {
		binary.LittleEndian.PutUint64(k[2:], r.Uint64())
		binary.LittleEndian.PutUint64(k[10:], r.Uint64())
		binary.LittleEndian.PutUint32(k[18:], r.Uint32())
		k[0], k[1] = 0, 20
	}
	set := chains.NewWatchSet(n)
	flat := make([]byte, n*w)
	hits := make([][]byte, n)
	for i := range hits {
		hits[i] = flat[i*w : (i+1)*w : (i+1)*w]
		script(hits[i])
		set.Add(hits[i])
	}
	if set.Len() != n {
		b.Fatalf("Len = %d, want %d", set.Len(), n)
	}
	flat = make([]byte, m*w)
	misses := make([][]byte, m)
	for i := range misses {
		misses[i] = flat[i*w : (i+1)*w : (i+1)*w]
		script(misses[i])
	}
	benchmarkLookups(b, set, hits, misses)
}

// benchmarkLookups measures Contains one key at a time and ContainsBatch
// 64 keys a call (what a block's outputs are looked up as), on hits (every
// key once, in insertion order, so at random places in the table), misses,
// and half: hits and misses drawn at random, so a branch on the answer
// cannot be predicted. Each reports lookups/s; allocs/op is per call.
func benchmarkLookups(b *testing.B, set *chains.WatchSet, hits, misses [][]byte) {
	const batch = 64
	r := rand.New(rand.NewPCG(11, 12))
	// The half probes are copies, one after the other, as a decoded block's
	// keys are: reading a probe is not a cache miss of its own.
	half := make([][]byte, len(misses))
	halfHits := make([]bool, len(misses))
	var flat []byte
	for i := range half {
		k := misses[i]
		if halfHits[i] = r.IntN(2) == 0; halfHits[i] {
			k = hits[r.IntN(len(hits))]
		}
		flat = append(flat, k...)
	}
	for i, at := 0, 0; i < len(half); i++ {
		w := len(hits[0])
		half[i], at = flat[at:at+w:at+w], at+w
	}
	streams := []struct {
		name   string
		probes [][]byte
		want   func(i int) bool
	}{
		{"hit", hits, func(int) bool { return true }},
		{"miss", misses, func(int) bool { return false }},
		{"half", half, func(i int) bool { return halfHits[i] }},
	}
	for _, st := range streams {
		// want[i] is the number of hits among the first i probes.
		want := make([]int, len(st.probes)+1)
		for i := range st.probes {
			want[i+1] = want[i] + b2i(st.want(i))
		}
		b.Run(st.name, func(b *testing.B) {
			b.ReportAllocs()
			got, i, passes := 0, 0, 0
			for b.Loop() {
				got += b2i(set.Contains(st.probes[i]))
				if i++; i == len(st.probes) {
					i, passes = 0, passes+1
				}
			}
			if w := want[len(st.probes)]*passes + want[i]; got != w {
				b.Fatalf("%d hits in %d passes and %d lookups, want %d", got, passes, i, w)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
		})
		b.Run("batch-"+st.name, func(b *testing.B) {
			b.ReportAllocs()
			out := make([]bool, batch)
			got, i, passes, looked := 0, 0, 0, 0
			for b.Loop() {
				n := min(batch, len(st.probes)-i)
				looked += n
				set.ContainsBatch(st.probes[i:i+n], out)
				for _, ok := range out[:n] {
					got += b2i(ok)
				}
				if i += n; i == len(st.probes) {
					i, passes = 0, passes+1
				}
			}
			if w := want[len(st.probes)]*passes + want[i]; got != w {
				b.Fatalf("%d hits in %d passes and %d lookups, want %d", got, passes, i, w)
			}
			b.ReportMetric(float64(looked)/b.Elapsed().Seconds(), "lookups/s")
		})
	}
}

func b2i(ok bool) int {
	if ok {
		return 1
	}
	return 0
}

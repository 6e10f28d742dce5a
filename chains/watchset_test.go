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
			for pass := 0; pass < 20; pass++ {
				for i := g; i < len(keys); i += 3 {
					ok := set.Contains(keys[i])
					if seen[i] && !ok {
						errs <- fmt.Errorf("key %d seen, then missing", i)
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
// 22-byte scripts: hits, and misses (what almost every output of a block is).
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
	b.Run("10M", benchmarkContains10M)
}

// benchmarkContains10M measures lookups at the target size, ten
// million 22-byte scripts, where a lookup is a cache miss (and a TLB miss
// without huge pages): hits walk every key once, misses are a million
// random scripts, so neither fits in a cache. The keys are one flat slice,
// so the benchmark's own memory is read sequentially.
func benchmarkContains10M(b *testing.B) {
	const n, w = 10_000_000, 22
	r := rand.New(rand.NewPCG(9, 10))
	set := chains.NewWatchSet(n)
	keys := make([]byte, n*w)
	for i := range n {
		k := keys[i*w : (i+1)*w]
		binary.LittleEndian.PutUint64(k[2:], r.Uint64())
		binary.LittleEndian.PutUint64(k[10:], r.Uint64())
		binary.LittleEndian.PutUint32(k[18:], r.Uint32())
		k[0], k[1] = 0, 20
		set.Add(k)
	}
	if set.Len() != n {
		b.Fatalf("Len = %d, want %d", set.Len(), n)
	}
	const m = 1 << 20
	misses := make([]byte, m*w)
	for i := range m {
		k := misses[i*w : (i+1)*w]
		binary.LittleEndian.PutUint64(k[2:], r.Uint64())
		binary.LittleEndian.PutUint64(k[10:], r.Uint64())
		binary.LittleEndian.PutUint32(k[18:], r.Uint32())
		k[0], k[1] = 0, 20
	}
	b.Run("hit", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if !set.Contains(keys[i*w : (i+1)*w]) {
				b.Fatal("miss")
			}
			if i++; i == n {
				i = 0
			}
		}
	})
	b.Run("miss", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if set.Contains(misses[i*w : (i+1)*w]) {
				b.Fatal("hit")
			}
			if i++; i == m {
				i = 0
			}
		}
	})
}

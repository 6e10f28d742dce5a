package chains

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// maxSlotWidth is the widest key kept in a fixed-width table. Every key a
// network hands to Watched is narrower (scripts of 22–34 bytes, 20-byte
// accounts, 32-byte keys); a wider or empty key goes to a small map so the
// contract still holds for any input.
const maxSlotWidth = 64

// A table is made of groups: a 16-byte header (15 one-byte tags, then a
// flags byte) followed by the 15 keys of its slots, padded to 16 bytes. A
// lookup reads one header and, on a tag match, a key a few lines further
// on the same page: one page walk, which on a virtual machine costs more
// than the memory access itself.
//
// A table grows when it would be fuller than maxLoadFifths/5 (4/5): at that
// load about one miss in five finds its home group's overflow flag set and
// reads the next group too (adjacent, so on the same page almost always).
const (
	groupSlots     = 15
	groupHead      = 16
	maxLoadFifths  = 4
	minTableGroups = 4
	// overflowed, in the header's flags byte, says a key whose probe
	// passed this group (full at the time) lives in a later group.
	overflowed = 1 << 56
	lowBits    = 0x0101010101010101
	highBits   = 0x8080808080808080
	// hiTagBits masks the high header word's seven tag bytes (the eighth
	// is the flags byte).
	hiTagBits uint64 = 0x00ffffffffffffff
)

// WatchSet is the in-memory set of every key ever issued on one network. It
// is read on every output of every block and only ever grows, so it is built
// for many fixed-width keys: one open-addressing table per key width, each a
// single allocation of groups of 15 keys under a 16-byte header (about 29
// bytes per 22-byte script at full load instead of ~180 for a map of
// strings). The tables live outside the garbage-collected heap where the
// platform allows it, so a large set does not raise the collector's heap
// goal.
//
// Lookups take no lock and allocate nothing: a lookup is a few loads, so
// consecutive lookups overlap their cache misses instead of queueing behind
// a lock's atomic read-modify-writes, and ContainsBatch overlaps them on
// purpose. Add (one writer at a time) publishes a key by storing its tag
// atomically after the key's bytes and after any overflow flag its probe
// set; a grown table is swapped in whole, and the table it replaced is
// unmapped only once no lookup can still hold it (runtime.AddCleanup).
type WatchSet struct {
	mu sync.Mutex // serializes Add and Keys
	// byWidth[w] holds the keys of w bytes, nil until one is added.
	byWidth [maxSlotWidth + 1]atomic.Pointer[table]
	// odd holds empty keys and keys wider than maxSlotWidth.
	oddMu sync.RWMutex
	odd   map[string]struct{}
	n     atomic.Int64
	// reserve is the size hint given to the first table created.
	reserve int
	seed    uint64
}

var (
	_ Watched      = (*WatchSet)(nil)
	_ BatchWatched = (*WatchSet)(nil)
)

// NewWatchSet returns an empty set sized for n keys (of the first width
// added; other widths start small and grow).
func NewWatchSet(n int) *WatchSet {
	return &WatchSet{reserve: n, seed: rand.Uint64()}
}

// Contains reports whether key is watched.
//
// Its common cases for a key of 16–32 bytes (every network's) are written
// out in one function of few instructions: a home group with no tag match
// and no overflow, and a first tag match that holds the key (compared a
// word at a time). The number of instructions per lookup bounds how many
// lookups the core runs ahead, and so how many of their misses overlap.
// It loads nothing it may not need: loading a hit's likely key together
// with the header made every miss pay a second memory access.
func (s *WatchSet) Contains(key []byte) bool {
	w := len(key)
	if w == 0 || w > maxSlotWidth {
		return s.containsOdd(key)
	}
	t := s.byWidth[w].Load()
	if t == nil {
		return false
	}
	var h uint64
	if w >= 16 && w <= 32 {
		// hashMid, written out: the compiler would not inline it.
		tail := key[w-16:]
		a, b := binary.LittleEndian.Uint64(key), binary.LittleEndian.Uint64(key[8:])
		c, d := binary.LittleEndian.Uint64(tail), binary.LittleEndian.Uint64(tail[8:])
		h = mix(a^s.seed^hashM1, b^hashM2) ^ mix(c^hashM3, d^s.seed^uint64(w)*hashM4)
	} else {
		h = hashOther(key, s.seed)
	}
	g := t.home(h)
	p := t.header(g)
	hd := [2]uint64{atomic.LoadUint64(&p[0]), atomic.LoadUint64(&p[1])}
	// t's memory is unmapped by a cleanup once t is unreachable: keep it
	// reachable past the last read of its groups.
	runtime.KeepAlive(t)
	tg := tag(h)
	pat := tg * lowBits
	mlo, mhi := zeroBytes(hd[0]^pat), zeroBytes(hd[1]^pat)&hiTagBits
	if mlo|mhi == 0 && hd[1]&overflowed == 0 {
		return false
	}
	if mlo|mhi != 0 && w >= 16 && w <= 32 {
		j := uint64(bits.TrailingZeros64(mlo) / 8)
		if mlo == 0 {
			j = 8 + uint64(bits.TrailingZeros64(mhi)/8)
		}
		if hd[j/8]>>(j%8*8)&0xff == tg {
			off := g*t.stride + groupHead + j*t.w
			k := t.mem[off : off+t.w]
			kt, tail := k[w-16:], key[w-16:]
			eq := binary.LittleEndian.Uint64(k) ^ binary.LittleEndian.Uint64(key) |
				binary.LittleEndian.Uint64(k[8:]) ^ binary.LittleEndian.Uint64(key[8:]) |
				binary.LittleEndian.Uint64(kt) ^ binary.LittleEndian.Uint64(tail) |
				binary.LittleEndian.Uint64(kt[8:]) ^ binary.LittleEndian.Uint64(tail[8:])
			if eq == 0 {
				runtime.KeepAlive(t)
				return true
			}
		}
	}
	ok := t.probe(key, h, g, hd)
	runtime.KeepAlive(t)
	return ok
}

func (s *WatchSet) containsOdd(key []byte) bool {
	s.oddMu.RLock()
	_, ok := s.odd[string(key)]
	s.oddMu.RUnlock()
	return ok
}

// batchChunk is how many lookups ContainsBatch starts before finishing
// any: enough to keep the core's outstanding misses busy, few enough that
// its state stays in L1.
const batchChunk = 32

// noHead stands in for the header of a key no table can hold, so the
// loading loop of ContainsBatch has no branch.
var noHead [2]uint64

// ContainsBatch sets out[i] to whether keys[i] is watched, for every key;
// out must be at least as long as keys. It answers as len(keys) calls of
// Contains would, faster: for a chunk of keys it first computes every hash
// and home group (no memory access but the keys), then loads every home
// header in a loop of a few instructions per key, so the core keeps many
// misses in flight (a lookup is a cache and TLB miss, and the window of
// instructions the core runs ahead is what bounds the overlap), then
// starts loading each tag match's key the same way, and only then compares.
func (s *WatchSet) ContainsBatch(keys [][]byte, out []bool) {
	out = out[:len(keys)]
	var (
		tabs  [batchChunk]*table
		hs    [batchChunk]uint64
		gs    [batchChunk]uint64
		ptrs  [batchChunk]*[2]uint64
		heads [batchChunk][2]uint64
	)
	for len(keys) > 0 {
		n := min(len(keys), batchChunk)
		for i, k := range keys[:n] {
			tabs[i], ptrs[i] = nil, &noHead
			if w := len(k); w != 0 && w <= maxSlotWidth {
				if t := s.byWidth[w].Load(); t != nil {
					var h uint64
					if w >= 16 && w <= 32 {
						// hashMid, written out: the compiler would not inline it.
						tail := k[w-16:]
						a, b := binary.LittleEndian.Uint64(k), binary.LittleEndian.Uint64(k[8:])
						c, d := binary.LittleEndian.Uint64(tail), binary.LittleEndian.Uint64(tail[8:])
						h = mix(a^s.seed^hashM1, b^hashM2) ^ mix(c^hashM3, d^s.seed^uint64(w)*hashM4)
					} else {
						h = hashOther(k, s.seed)
					}
					g := t.home(h)
					tabs[i], hs[i], gs[i], ptrs[i] = t, h, g, t.header(g)
				}
			}
		}
		for i, p := range ptrs[:n] {
			heads[i] = [2]uint64{atomic.LoadUint64(&p[0]), atomic.LoadUint64(&p[1])}
		}
		for i, t := range tabs[:n] {
			if t != nil {
				t.touchMatch(gs[i], hs[i], heads[i])
			}
		}
		for i, k := range keys[:n] {
			if t := tabs[i]; t != nil {
				// A clean miss, written out (most keys of a block).
				hd, pat := heads[i], tag(hs[i])*lowBits
				out[i] = (zeroBytes(hd[0]^pat)|zeroBytes(hd[1]^pat)&hiTagBits != 0 || hd[1]&overflowed != 0) &&
					t.probe(k, hs[i], gs[i], hd)
			} else if w := len(k); w == 0 || w > maxSlotWidth {
				out[i] = s.containsOdd(k)
			} else {
				out[i] = false
			}
		}
		keys, out = keys[n:], out[n:]
	}
	runtime.KeepAlive(&tabs)
}

// Add adds keys to the set; adding a key twice is harmless.
func (s *WatchSet) Add(keys ...[]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		s.add(k)
	}
}

func (s *WatchSet) add(k []byte) {
	w := len(k)
	if w == 0 || w > maxSlotWidth {
		s.oddMu.Lock()
		defer s.oddMu.Unlock()
		if s.odd == nil {
			s.odd = map[string]struct{}{}
		}
		if _, ok := s.odd[string(k)]; !ok {
			s.odd[string(k)] = struct{}{}
			s.n.Add(1)
		}
		return
	}
	t := s.byWidth[w].Load()
	if t == nil {
		t = newTable(w, s.reserve)
		s.reserve = 0
		s.byWidth[w].Store(t)
	}
	h := hashKey(k, s.seed)
	if g := t.home(h); t.probe(k, h, g, t.head(g)) {
		return
	}
	if t.full() {
		t = t.grown(s.seed)
		s.byWidth[w].Store(t)
		if t.n >= 1<<20 {
			// The old table (hundreds of megabytes outside the heap) is
			// unmapped by its cleanup after the next collection, which a
			// small heap would put off for minutes.
			go runtime.GC()
		}
	}
	t.insert(k, h)
	s.n.Add(1)
}

// Len returns the number of watched keys.
func (s *WatchSet) Len() int { return int(s.n.Load()) }

// table is an open-addressing set of keys of one width, probed linearly by
// groups (see groupSlots). Tag j of a group is byte j of its header: 0 for
// an empty slot, else a byte of the key's hash (never 0). The flags byte
// holds overflowed. Nothing is ever deleted, so no tombstones are needed.
type table struct {
	w      uint64 // key width
	stride uint64 // bytes per group
	groups uint64
	n      int // written under the set's writer lock only
	mem    []byte
	base   unsafe.Pointer // &mem[0]
}

// newTable returns a table of width w with room for n keys, in one
// allocation freed when the table is unreachable.
func newTable(w, n int) *table {
	groups := uint64(n)*5/(groupSlots*maxLoadFifths) + 1
	groups = max(groups, minTableGroups)
	stride := (groupHead + groupSlots*uint64(w) + 15) &^ 15
	mem := allocSlots(int(groups * stride))
	t := &table{w: uint64(w), stride: stride, groups: groups, mem: mem, base: unsafe.Pointer(unsafe.SliceData(mem))}
	runtime.AddCleanup(t, freeSlots, mem)
	return t
}

// home maps a hash onto its first group (Lemire's multiply-shift, so the
// group count need not be a power of two and a table is sized to what it
// holds).
func (t *table) home(h uint64) uint64 {
	hi, _ := bits.Mul64(h, t.groups)
	return hi
}

// header returns group g's header words; g < t.groups (home and the
// probes' wrap-around keep it so).
func (t *table) header(g uint64) *[2]uint64 {
	return (*[2]uint64)(unsafe.Add(t.base, g*t.stride))
}

// head loads group g's header.
func (t *table) head(g uint64) [2]uint64 {
	p := t.header(g)
	return [2]uint64{atomic.LoadUint64(&p[0]), atomic.LoadUint64(&p[1])}
}

// key returns the key bytes of slot j of group g.
func (t *table) key(g, j uint64) []byte {
	off := g*t.stride + groupHead + j*t.w
	return t.mem[off : off+t.w : off+t.w]
}

// touchMatch starts loading the key of the first slot of group g whose tag
// matches h (its header is hd), or re-reads the header if none does. An
// atomic load, because the compiler keeps it though its value is not used
// (and it may read a slot being filled; the value means nothing until its
// tag says so).
func (t *table) touchMatch(g, h uint64, hd [2]uint64) {
	pat := tag(h) * lowBits
	off := g * t.stride
	if m := zeroBytes(hd[0] ^ pat); m != 0 {
		off += groupHead + uint64(bits.TrailingZeros64(m)/8)*t.w
	} else if m := zeroBytes(hd[1]^pat) & (hiTagBits & highBits); m != 0 {
		off += groupHead + (8+uint64(bits.TrailingZeros64(m)/8))*t.w
	}
	atomic.LoadUint32((*uint32)(unsafe.Add(t.base, off&^3)))
}

// tag is the low byte of the hash (multiply-shift took the high bits for
// the group), with 0 kept for empty slots.
func tag(h uint64) uint64 {
	b := h & 0xff
	return b | (b-1)>>63
}

// zeroBytes flags (high bit) every zero byte of x up to the first one
// exactly; beyond it a flag may be false, so callers check each byte.
func zeroBytes(x uint64) uint64 { return (x - lowBits) &^ x & highBits }

// probe looks key up from its home group g, whose header hd the caller
// loaded. A key lives in the first group from its home that had a free
// slot when it was added, and every group its probe passed is flagged
// overflowed (flag stored before the key's tag), so a lookup stops at the
// first group without the flag.
func (t *table) probe(key []byte, h, g uint64, hd [2]uint64) bool {
	tg := tag(h)
	pat := tg * lowBits
	for {
		for m := zeroBytes(hd[0] ^ pat); m != 0; m &= m - 1 {
			j := uint64(bits.TrailingZeros64(m) / 8)
			if hd[0]>>(j*8)&0xff == tg && bytes.Equal(t.key(g, j), key) {
				return true
			}
		}
		for m := zeroBytes(hd[1]^pat) & (hiTagBits & highBits); m != 0; m &= m - 1 {
			j := uint64(bits.TrailingZeros64(m) / 8)
			if hd[1]>>(j*8)&0xff == tg && bytes.Equal(t.key(g, 8+j), key) {
				return true
			}
		}
		if hd[1]&overflowed == 0 {
			return false
		}
		if g++; g == t.groups {
			g = 0
		}
		hd = t.head(g)
	}
}

// freeSlot returns the first free slot of a group with header hd, or false
// if the group is full.
func freeSlot(hd [2]uint64) (uint64, bool) {
	if m := zeroBytes(hd[0]); m != 0 {
		return uint64(bits.TrailingZeros64(m) / 8), true
	}
	// The lowest flagged byte is exact; the flags byte is masked off.
	if m := zeroBytes(hd[1]|^hiTagBits) & hiTagBits; m != 0 {
		return 8 + uint64(bits.TrailingZeros64(m)/8), true
	}
	return 0, false
}

// insert stores key, known to be absent, in a table that has room: the
// overflow flags of the full groups it passes first, then its bytes, then
// its tag, each header word with an atomic store, so a lookup that sees the
// tag sees the whole key and the way to it.
func (t *table) insert(key []byte, h uint64) {
	g := t.home(h)
	for {
		p := t.header(g) // only writers store, and they hold the lock
		hd := [2]uint64{p[0], p[1]}
		if j, ok := freeSlot(hd); ok {
			copy(t.key(g, j), key)
			atomic.StoreUint64(&p[j/8], hd[j/8]|tag(h)<<(j%8*8))
			t.n++
			return
		}
		if hd[1]&overflowed == 0 {
			atomic.StoreUint64(&p[1], hd[1]|overflowed)
		}
		if g++; g == t.groups {
			g = 0
		}
	}
}

func (t *table) full() bool {
	return uint64(t.n+1)*5 > t.groups*groupSlots*maxLoadFifths
}

// each calls fn with every key of t (under the writer lock).
func (t *table) each(fn func(k []byte)) {
	for g := range t.groups {
		hd := t.header(g)
		for j := range uint64(groupSlots) {
			if hd[j/8]>>(j%8*8)&0xff != 0 {
				fn(t.key(g, j))
			}
		}
	}
}

// grown returns a larger copy of t. Small tables double; large ones grow by
// half, since the old and new table coexist while copying (and until no
// lookup holds the old one).
func (t *table) grown(seed uint64) *table {
	n := t.n * 2
	if t.n >= 1<<20 {
		n = t.n + t.n/2
	}
	nt := newTable(int(t.w), n)
	t.each(func(k []byte) { nt.insert(k, hashKey(k, seed)) })
	return nt
}

// Multipliers of the key hash (wyhash's).
const (
	hashM1 = 0xa0761d6478bd642f
	hashM2 = 0xe7037ed1a0b428db
	hashM3 = 0x8ebc6af09c88c6e3
	hashM4 = 0x589965cc75374cc3
)

// hashKey hashes a key of 1–64 bytes, seeded per set: 64-bit
// multiply-folds over 8-byte words (overlapping at the ends), plain
// arithmetic inlined into the lookup. The widths every network uses (16–32
// bytes) take four loads and two independent multiplications. Every byte
// counts, so keys that share a script prefix or differ in one byte spread
// like any others.
func hashKey(k []byte, seed uint64) uint64 {
	if n := len(k); n >= 16 && n <= 32 {
		return hashMid(k, seed)
	}
	return hashOther(k, seed)
}

// hashMid is hashKey of a key of 16–32 bytes (small enough to be inlined).
func hashMid(k []byte, seed uint64) uint64 {
	n := len(k)
	tail := k[n-16:]
	a, b := binary.LittleEndian.Uint64(k), binary.LittleEndian.Uint64(k[8:])
	c, d := binary.LittleEndian.Uint64(tail), binary.LittleEndian.Uint64(tail[8:])
	return mix(a^seed^hashM1, b^hashM2) ^ mix(c^hashM3, d^seed^uint64(n)*hashM4)
}

// hashOther hashes keys shorter than 16 or longer than 32 bytes.
func hashOther(k []byte, seed uint64) uint64 {
	n := len(k)
	h := seed ^ uint64(n)*hashM3
	var a, b uint64
	switch {
	case n > 16:
		for i := 0; i+16 < n; i += 16 {
			h = mix(binary.LittleEndian.Uint64(k[i:])^hashM1, binary.LittleEndian.Uint64(k[i+8:])^h)
		}
		a, b = binary.LittleEndian.Uint64(k[n-16:]), binary.LittleEndian.Uint64(k[n-8:])
	case n >= 8:
		a, b = binary.LittleEndian.Uint64(k), binary.LittleEndian.Uint64(k[n-8:])
	case n >= 4:
		a, b = uint64(binary.LittleEndian.Uint32(k)), uint64(binary.LittleEndian.Uint32(k[n-4:]))
	case n > 0:
		a = uint64(k[0])<<16 | uint64(k[n>>1])<<8 | uint64(k[n-1])
	}
	return mix(hashM2^uint64(n), mix(a^hashM2, b^h))
}

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

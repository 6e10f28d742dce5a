package chains

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"runtime"
	"sync"
)

// maxSlotWidth is the widest key kept in a fixed-width table. Every key a
// network hands to Watched is narrower (scripts of 22–34 bytes, 20-byte
// accounts, 32-byte keys); a wider or empty key goes to a small map so the
// contract still holds for any input.
const maxSlotWidth = 64

// Load factor of a table, as a fraction of 8: a table grows when it would be
// fuller than 7/8. Lookups that miss (almost every output of a block) scan
// one-byte fingerprints until an empty slot, so a full table stays cheap;
// the keys themselves are compared only on a fingerprint match.
const (
	maxLoadEighths = 7
	minTableSlots  = 64
)

// WatchSet is the in-memory set of every key ever issued on one network. It
// is read on every output of every block and only ever grows, so it is built
// for many fixed-width keys: one open-addressing table per key width, each a
// single allocation of one fingerprint byte plus the key per slot (about 26
// bytes per 22-byte script at full load instead of ~180 for a map of
// strings). The tables live outside the garbage-collected heap where the
// platform allows it, so a large set does not raise the collector's heap
// goal. Lookups take a read lock and allocate nothing; Add may be called
// concurrently from the refresher.
type WatchSet struct {
	mu sync.RWMutex
	// byWidth[w] holds the keys of w bytes, nil until one is added.
	byWidth [maxSlotWidth + 1]*table
	// odd holds empty keys and keys wider than maxSlotWidth.
	odd map[string]struct{}
	// reserve is the size hint given to the first table created.
	reserve int
	seed    maphash.Seed
}

var _ Watched = (*WatchSet)(nil)

// NewWatchSet returns an empty set sized for n keys (of the first width
// added; other widths start small and grow).
func NewWatchSet(n int) *WatchSet {
	return &WatchSet{reserve: n, seed: maphash.MakeSeed()}
}

// Contains reports whether key is watched.
func (s *WatchSet) Contains(key []byte) bool {
	s.mu.RLock()
	var ok bool
	if w := len(key); w > 0 && w <= maxSlotWidth {
		if t := s.byWidth[w]; t != nil {
			ok = t.contains(key, maphash.Bytes(s.seed, key))
		}
	} else if s.odd != nil {
		_, ok = s.odd[string(key)]
	}
	s.mu.RUnlock()
	return ok
}

// Add adds keys to the set; adding a key twice is harmless.
func (s *WatchSet) Add(keys ...[]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		w := len(k)
		if w == 0 || w > maxSlotWidth {
			if s.odd == nil {
				s.odd = map[string]struct{}{}
			}
			s.odd[string(k)] = struct{}{}
			continue
		}
		t := s.byWidth[w]
		if t == nil {
			t = newTable(w, s.reserve)
			s.reserve = 0
			s.byWidth[w] = t
		}
		h := maphash.Bytes(s.seed, k)
		if t.contains(k, h) {
			continue
		}
		if t.full() {
			t = t.grown(s.seed)
			s.byWidth[w] = t
		}
		t.insert(k, h)
	}
}

// Len returns the number of watched keys.
func (s *WatchSet) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := len(s.odd)
	for _, t := range s.byWidth {
		if t != nil {
			n += t.n
		}
	}
	return n
}

// table is an open-addressing (linear probing) set of keys of one width.
// ctrl[i] is 0 for an empty slot, else 0x80 | 7 bits of the key's hash; the
// key of slot i is keys[i*w : (i+1)*w]. Both live in mem, one allocation.
// Nothing is ever deleted, so no tombstones are needed.
type table struct {
	w     int
	slots uint64
	n     int
	ctrl  []byte
	keys  []byte
	mem   []byte
	// free releases mem once the table is unreachable, unless grown freed
	// it first.
	free runtime.Cleanup
}

// newTable returns a table of width w with room for n keys.
func newTable(w, n int) *table {
	slots := uint64(n)*8/maxLoadEighths + 1
	if slots < minTableSlots {
		slots = minTableSlots
	}
	mem := allocSlots(int(slots) * (1 + w))
	t := &table{w: w, slots: slots, ctrl: mem[:slots:slots], keys: mem[slots:], mem: mem}
	t.free = runtime.AddCleanup(t, freeSlots, mem)
	return t
}

func (t *table) key(i uint64) []byte {
	off := i * uint64(t.w)
	return t.keys[off : off+uint64(t.w)]
}

// start maps a hash onto a slot (Lemire's multiply-shift, so the slot count
// need not be a power of two and a table is sized to what it holds).
func (t *table) start(h uint64) uint64 {
	hi, _ := bits.Mul64(h, t.slots)
	return hi
}

func fingerprint(h uint64) byte { return byte(h) | 0x80 }

// contains probes eight fingerprints per step where the run does not wrap:
// ctrl bytes are 0 or have the high bit set, so one word tells both which
// slots may hold key and whether the run ends in this group. A key is always
// before the first empty slot of its run, so a group with an empty slot ends
// the search once its matches were compared.
func (t *table) contains(key []byte, h uint64) bool {
	fp := fingerprint(h)
	pat := uint64(fp) * lowBits
	for i := t.start(h); ; {
		if i+8 <= t.slots {
			g := binary.LittleEndian.Uint64(t.ctrl[i:])
			x := g ^ pat
			for m := (x - lowBits) &^ x & highBits; m != 0; m &= m - 1 {
				if j := i + uint64(bits.TrailingZeros64(m)/8); bytes.Equal(t.key(j), key) {
					return true
				}
			}
			if ^g&highBits != 0 {
				return false
			}
			if i += 8; i == t.slots {
				i = 0
			}
			continue
		}
		c := t.ctrl[i]
		if c == 0 {
			return false
		}
		if c == fp && bytes.Equal(t.key(i), key) {
			return true
		}
		if i++; i == t.slots {
			i = 0
		}
	}
}

const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// insert stores key, known to be absent, in a table that has room.
func (t *table) insert(key []byte, h uint64) {
	i := t.start(h)
	for t.ctrl[i] != 0 {
		if i++; i == t.slots {
			i = 0
		}
	}
	t.ctrl[i] = fingerprint(h)
	copy(t.key(i), key)
	t.n++
}

func (t *table) full() bool {
	return uint64(t.n+1)*8 > t.slots*maxLoadEighths
}

// grown returns a larger copy of t and frees t. Small tables double; large
// ones grow by half, since the old and new table coexist while copying.
func (t *table) grown(seed maphash.Seed) *table {
	n := t.n * 2
	if t.n >= 1<<20 {
		n = t.n + t.n/2
	}
	nt := newTable(t.w, n)
	for i, c := range t.ctrl {
		if c != 0 {
			k := t.key(uint64(i))
			nt.insert(k, maphash.Bytes(seed, k))
		}
	}
	// Callers hold the write lock: no reader can still see t.
	t.free.Stop()
	freeSlots(t.mem)
	return nt
}

package chains

import "sync"

// WatchSet is the in-memory set of every key ever issued on one network. It
// is read on every output of every block, so lookups take a read lock and
// allocate nothing.
type WatchSet struct {
	mu   sync.RWMutex
	keys map[string]struct{}
}

var _ Watched = (*WatchSet)(nil)

// NewWatchSet returns an empty set sized for n keys.
func NewWatchSet(n int) *WatchSet {
	return &WatchSet{keys: make(map[string]struct{}, n)}
}

// Contains reports whether key is watched.
func (s *WatchSet) Contains(key []byte) bool {
	s.mu.RLock()
	_, ok := s.keys[string(key)]
	s.mu.RUnlock()
	return ok
}

// Add adds keys to the set; adding a key twice is harmless.
func (s *WatchSet) Add(keys ...[]byte) {
	s.mu.Lock()
	for _, k := range keys {
		s.keys[string(k)] = struct{}{}
	}
	s.mu.Unlock()
}

// Len returns the number of watched keys.
func (s *WatchSet) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.keys)
}

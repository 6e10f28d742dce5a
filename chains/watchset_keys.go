package chains

import "bytes"

// Keys returns a copy of every watched key, in no particular order (for
// sources that poll per address).
func (s *WatchSet) Keys() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oddMu.RLock()
	out := make([][]byte, 0, s.Len())
	for k := range s.odd {
		out = append(out, []byte(k))
	}
	s.oddMu.RUnlock()
	for w := range s.byWidth {
		if t := s.byWidth[w].Load(); t != nil {
			t.each(func(k []byte) { out = append(out, bytes.Clone(k)) })
		}
	}
	return out
}

package chains

import "bytes"

// Keys returns a copy of every watched key, in no particular order (for
// sources that poll per address).
func (s *WatchSet) Keys() [][]byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([][]byte, 0, len(s.odd))
	for k := range s.odd {
		out = append(out, []byte(k))
	}
	for _, t := range s.byWidth {
		if t == nil {
			continue
		}
		for i, c := range t.ctrl {
			if c != 0 {
				out = append(out, bytes.Clone(t.key(uint64(i))))
			}
		}
	}
	return out
}

package chains

// Keys returns a copy of every watched key, in no particular order (for
// sources that poll per address).
func (s *WatchSet) Keys() [][]byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([][]byte, 0, len(s.keys))
	for k := range s.keys {
		out = append(out, []byte(k))
	}
	return out
}

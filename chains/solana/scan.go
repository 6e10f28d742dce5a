package solana

import (
	"bytes"
	"errors"
	"fmt"
)

// scanner is a single-pass JSON reader over a response body. It validates
// the full JSON grammar of everything it reads or skips, never allocates,
// and returns string contents as sub-slices of the body (escapes left as
// they are). It exists because block bodies are megabytes and encoding/json
// scans them twice through reflection.
type scanner struct {
	b []byte
	i int
}

// maxDepth matches encoding/json's nesting limit.
const maxDepth = 10000

var errSyntax = errors.New("malformed JSON")

func (s *scanner) fail(what string) error {
	return fmt.Errorf("%w at offset %d: %s", errSyntax, s.i, what)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte (0 at the end).
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return s.fail(fmt.Sprintf("want %q", c))
	}
	s.i++
	return nil
}

// null consumes a null literal if one comes next.
func (s *scanner) null() bool {
	if s.peek() == 'n' && s.i+4 <= len(s.b) && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

func (s *scanner) literal(word string) error {
	if s.i+len(word) > len(s.b) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.fail("bad literal")
	}
	s.i += len(word)
	return nil
}

// str reads a string and returns its raw contents.
func (s *scanner) str() ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	start := s.i
	// Fast path: no escape and no control character before the next quote.
	if j := bytes.IndexByte(s.b[start:], '"'); j >= 0 && plain(s.b[start:start+j]) {
		s.i = start + j + 1
		return s.b[start : start+j], nil
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], nil
		case c < 0x20:
			return nil, s.fail("control character in string")
		case c == '\\':
			s.i++
			if s.i >= len(s.b) {
				return nil, s.fail("truncated escape")
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if s.i+5 > len(s.b) {
					return nil, s.fail("truncated \\u escape")
				}
				for _, h := range s.b[s.i+1 : s.i+5] {
					if !isHex(h) {
						return nil, s.fail("bad \\u escape")
					}
				}
				s.i += 5
			default:
				return nil, s.fail("bad escape")
			}
		default:
			s.i++
		}
	}
	return nil, s.fail("unterminated string")
}

// plain reports whether b holds no backslash and no control character.
func plain(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == '\\' {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number skips a number per the JSON grammar.
func (s *scanner) number() error {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && s.b[s.i] >= '1' && s.b[s.i] <= '9':
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
	default:
		s.i = start
		return s.fail("bad number")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return s.fail("bad fraction")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return s.fail("bad exponent")
		}
	}
	return nil
}

func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// u64 reads a non-negative integer that fits in uint64 (no fraction or
// exponent, as agave prints lamports and slots).
func (s *scanner) u64() (uint64, error) {
	s.ws()
	start := s.i
	var v uint64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		d := uint64(s.b[s.i] - '0')
		if v > (1<<64-1-d)/10 {
			return 0, s.fail("integer overflows uint64")
		}
		v = v*10 + d
		s.i++
	}
	if s.i == start || (s.b[start] == '0' && s.i-start > 1) {
		s.i = start
		return 0, s.fail("want an unsigned integer")
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return 0, s.fail("want an integer")
		}
	}
	return v, nil
}

// i64 reads a possibly negative integer that fits in int64.
func (s *scanner) i64() (int64, error) {
	neg := s.peek() == '-'
	if neg {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] < '0' || s.b[s.i] > '9') {
			return 0, s.fail("bad number")
		}
	}
	u, err := s.u64()
	if err != nil {
		return 0, err
	}
	if neg {
		if u > 1<<63 {
			return 0, s.fail("integer overflows int64")
		}
		return -int64(u), nil
	}
	if u > 1<<63-1 {
		return 0, s.fail("integer overflows int64")
	}
	return int64(u), nil
}

// skip skips any value.
func (s *scanner) skip(depth int) error {
	if depth > maxDepth {
		return s.fail("nesting too deep")
	}
	switch s.peek() {
	case '"':
		_, err := s.str()
		return err
	case '{':
		return s.object(func([]byte) error { return s.skip(depth + 1) })
	case '[':
		return s.array(func() error { return s.skip(depth + 1) })
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	return s.number()
}

// object reads an object, calling member for each key with the scanner
// positioned on the value; member must consume the value.
func (s *scanner) object(member func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.fail("want ',' or '}'")
		}
	}
}

// array reads an array, calling elem with the scanner on each element.
func (s *scanner) array(elem func() error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.fail("want ',' or ']'")
		}
	}
}

// end checks that only whitespace follows the top-level value.
func (s *scanner) end() error {
	if s.peek() != 0 || s.i != len(s.b) {
		return s.fail("data after the response")
	}
	return nil
}

// b58 maps base58 (bitcoin alphabet) characters to their value, 0xff if
// not in the alphabet.
var b58 = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz" {
		t[c] = byte(i)
	}
	return t
}()

// decodeKey58 decodes the canonical base58 text of a 32-byte key (as
// solana-go's PublicKeyFromBase58 accepts it) without allocating.
func decodeKey58(s []byte) (k [32]byte, ok bool) {
	if len(s) == 0 || len(s) > maxKey58 {
		return k, false
	}
	var limbs [8]uint32 // big-endian base 2^32
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	for _, c := range s {
		v := b58[c]
		if v == 0xff {
			return k, false
		}
		carry := uint64(v)
		for j := 7; j >= 0; j-- {
			x := uint64(limbs[j])*58 + carry
			limbs[j], carry = uint32(x), x>>32
		}
		if carry != 0 {
			return k, false
		}
	}
	for j, l := range limbs {
		k[4*j], k[4*j+1], k[4*j+2], k[4*j+3] = byte(l>>24), byte(l>>16), byte(l>>8), byte(l)
	}
	lz := 0
	for lz < 32 && k[lz] == 0 {
		lz++
	}
	return k, lz == zeros
}

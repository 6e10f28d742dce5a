package addresses

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/gagliardetto/solana-go"

	"github.com/paywatch/paywatch/payment"
)

// maxPoolLine bounds one line of a pool file; a base58 key has 32 to 44
// characters.
const maxPoolLine = 4096

// ParseSolanaPool reads a Solana address pool: one base58 public key per
// line; blank lines and lines starting with # are ignored. Every key must be
// a canonical base58 encoding of 32 bytes on the ed25519 curve (off-curve
// keys are program derived addresses, which no wallet can sign for). An
// invalid line, a secret key or keypair, a duplicate key or a file without
// any key is an error wrapping ErrInvalidPool that names the line number;
// the offending line's content is never echoed (it may be a secret). The
// addresses have Index -1, in file order.
func ParseSolanaPool(r io.Reader) ([]Address, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxPoolLine)
	seen := make(map[[32]byte]int)
	var out []Address
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if strings.HasPrefix(text, "[") {
			return nil, fmt.Errorf("%w: line %d: looks like a keypair (JSON secret key); import only public keys", ErrInvalidPool, line)
		}
		b := base58.Decode(text)
		if len(b) == 64 {
			return nil, fmt.Errorf("%w: line %d: a 64-byte secret key, not a public key; import only public keys", ErrInvalidPool, line)
		}
		if len(b) != 32 || base58.Encode(b) != text {
			return nil, fmt.Errorf("%w: line %d: not a 32-byte base58 public key", ErrInvalidPool, line)
		}
		var key solana.PublicKey
		copy(key[:], b)
		if !key.IsOnCurve() {
			return nil, fmt.Errorf("%w: line %d: %s is off the ed25519 curve (a program derived address, which no wallet can sign for)", ErrInvalidPool, line, text)
		}
		if first, dup := seen[key]; dup {
			return nil, fmt.Errorf("%w: line %d: duplicate of line %d (%s)", ErrInvalidPool, line, first, text)
		}
		seen[key] = line
		out = append(out, Address{Network: payment.Solana, Key: b, String: text, Index: -1})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: line %d: longer than %d bytes", ErrInvalidPool, line+1, maxPoolLine)
		}
		return nil, fmt.Errorf("%w: read after line %d: %v", ErrInvalidPool, line, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no public key in the file", ErrInvalidPool)
	}
	return out, nil
}

package chains

import (
	"context"
	"errors"
	"fmt"
)

// ErrWrongChain is a node that runs another chain than the configured one:
// a testnet, a devnet or a development node behind a mainnet config (the
// address formats are the same), or a public chain behind a regtest config.
// Its coins are not the configured chain's, so nothing it reports may mark
// an order paid: the scanner records it as critical and stops at its
// cursor (ChainVerifier).
var ErrWrongChain = errors.New("the node is on another chain than configured")

// ChainVerifier is implemented by sources whose node can say which chain it
// runs (Ethereum's chain id, Tron's genesis block id, Solana's genesis
// hash, Bitcoin's chain name). The scanner asks before its first step and
// again at least every poll interval (ScannerConfig.Chain); without it the
// node's chain is never checked.
type ChainVerifier interface {
	// VerifyChain returns an error wrapping ErrWrongChain, which names what
	// the node runs, when the node's chain is not chain (mainnet, testnet
	// or regtest); any other error is a failure to ask.
	VerifyChain(ctx context.Context, chain string) error
}

// verifyChain asks the source which chain its node runs, before the first
// step and then at most once per poll interval (the steps of a caught-up
// scanner, each of which records the network's health). A mismatch wraps
// ErrWrongChain; a failure to ask fails the step.
func (s *Scanner) verifyChain(ctx context.Context) error {
	v, ok := s.src.(ChainVerifier)
	if !ok || s.cfg.Chain == "" {
		return nil
	}
	now := s.cfg.Clock.Now()
	s.mu.Lock()
	due := s.chainVerifiedAt.IsZero() || now.Sub(s.chainVerifiedAt) >= s.cfg.PollInterval || now.Before(s.chainVerifiedAt)
	s.mu.Unlock()
	if !due {
		return nil
	}
	if err := v.VerifyChain(ctx, s.cfg.Chain); err != nil {
		if errors.Is(err, ErrWrongChain) {
			return err
		}
		return fmt.Errorf("chain identity: %w", err)
	}
	s.mu.Lock()
	s.chainVerifiedAt = now
	s.mu.Unlock()
	return nil
}

package main

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	solbase58 "github.com/mr-tron/base58"
	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// prepareDatabase migrates, resets the scanner state of chains that were
// started afresh, imports the Solana pool and makes sure of the API key.
func (s *sandbox) prepareDatabase(ctx context.Context) error {
	st, err := store.Open(ctx, s.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return err
	}
	if err := s.resetStaleCursors(ctx, st); err != nil {
		return err
	}
	if err := importSolanaPool(ctx, st, sandboxSolanaPool(sandboxSolanaPoolSize)); err != nil {
		return fmt.Errorf("import the sandbox Solana pool: %w", err)
	}
	return s.ensureAPIKey(ctx, st)
}

// resetStaleCursors handles the chains a restart replaces: btcd wipes its
// regtest chain on every start and the simulated Tron and Solana nodes live
// in memory, so a stored cursor can point at a block that no longer exists.
// For such a network (the block at the cursor's height is missing or has
// another hash) the sandbox
//
//  1. extends the new chain past every height the database knows for the
//     network (its cursor and its recorded transfers), so that no block of
//     the new chain ever replaces a height holding an old transfer — the
//     scanner would rightly orphan that transfer as a reorg and revert what
//     it paid;
//  2. forgets the scanner state — its cursor and block refs — so that the
//     scanner starts again at the new chain's tip.
//
// SANDBOX ONLY. Intents, transfers, payments and the ledger are kept: what
// was paid stays paid, even though the old chain is gone. A production
// paywatch never does this: a vanished chain there is a reorg deeper than
// the safety depth, reported as critical.
func (s *sandbox) resetStaleCursors(ctx context.Context, st *store.Store) error {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, n := range payment.Networks {
		cur, err := st.GetCursor(ctx, string(n))
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		src, err := checkSource(ctx, s.cfg, n, log)
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		b, err := src.Block(ctx, chains.Height(cur.Height), noneWatched{})
		switch {
		case err == nil && b.Hash == cur.Hash:
			continue
		case err == nil, errors.Is(err, chains.ErrBlockNotFound), errors.Is(err, chains.ErrSkipped):
		default:
			return fmt.Errorf("%s: check the stored cursor at height %d: %w", n, cur.Height, err)
		}
		top := cur.Height
		var maxTransfer int64
		var anyTransfer bool
		err = st.InTx(ctx, func(tx *store.Tx) (err error) {
			maxTransfer, anyTransfer, err = tx.MaxTransferHeight(ctx, string(n))
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		if anyTransfer && maxTransfer > top {
			top = maxTransfer
		}
		tip, err := src.Tip(ctx)
		if err != nil {
			return fmt.Errorf("%s: node tip: %w", n, err)
		}
		if int64(tip) <= top {
			if err := s.extend(ctx, n, int(top-int64(tip)+1)); err != nil {
				return fmt.Errorf("%s: extend the new chain to height %d: %w", n, top+1, err)
			}
		}
		err = st.InTx(ctx, func(tx *store.Tx) error { return tx.ForgetScanState(ctx, string(n)) })
		if err != nil {
			return fmt.Errorf("%s: reset the scanner: %w", n, err)
		}
		s.say("%s: a new chain after the restart (block %d is gone); extended past height %d, scanning resumes at its tip (sandbox only)",
			n, cur.Height, top)
	}
	return nil
}

// sandboxSolanaPool returns the first n sandbox Solana pool keys: key i is
// the public key of ed25519.NewKeyFromSeed(sha256("paywatch sandbox solana
// " + i)), the recipe of addresses.SandboxSolanaPool (its first 20 keys).
func sandboxSolanaPool(n int) []string {
	out := make([]string, n)
	for i := range n {
		seed := sha256.Sum256([]byte("paywatch sandbox solana " + strconv.Itoa(i)))
		pub := ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey)
		out[i] = solbase58.Encode(pub)
	}
	return out
}

// ensureAPIKey reuses the remembered key when the database still has it,
// else creates one with every scope.
func (s *sandbox) ensureAPIKey(ctx context.Context, st *store.Store) error {
	if s.state.APIKey != "" {
		k, err := st.APIKeyByPlain(ctx, s.state.APIKey)
		if err == nil && k.HasScope("storefront") && k.HasScope("finance") && k.HasScope("operator") {
			s.env[envAPIKey] = s.state.APIKey
			return nil
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	scopes := []string{"storefront", "finance", "operator"}
	now := time.Now().UTC()
	plain, _, err := st.CreateAPIKey(ctx, "sandbox", scopes, now)
	if errors.Is(err, store.ErrConflict) {
		plain, _, err = st.CreateAPIKey(ctx, fmt.Sprintf("sandbox-%d", now.UnixNano()), scopes, now)
	}
	if err != nil {
		return fmt.Errorf("create the sandbox API key: %w", err)
	}
	s.state.APIKey = plain
	s.env[envAPIKey] = plain
	s.say("created the sandbox API key (scopes storefront, finance, operator)")
	return nil
}

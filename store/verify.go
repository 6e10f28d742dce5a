package store

import (
	"context"
	"errors"
	"time"
)

// The states of a transfer's verification by a second source (issue 33
// item 5; migration 0035).
const (
	// VerifyVerified: an endpoint of another provider shows the transfer
	// (same destination, asset and amount) at the required depth on its
	// best chain, in the block the scanner saw.
	VerifyVerified = "verified"
	// VerifyPending: the verifier cannot say yet (it is behind, or every
	// endpoint of another provider failed).
	VerifyPending = "pending"
	// VerifyUnseen: the verifier's best chain has another block at the
	// height, or its block lacks the transfer.
	VerifyUnseen = "unseen"
	// VerifyDisagrees: the verifier shows the transaction paying another
	// destination, asset or amount.
	VerifyDisagrees = "disagrees"
	// VerifyNoVerifier: the network has no endpoint of another provider.
	VerifyNoVerifier = "no_verifier"
)

// Verification is what the second source found for a transfer.
type Verification struct {
	// State is one of the Verify* states, "" before the first check.
	State string
	// Endpoint is the endpoint that answered (a name, never a URL).
	Endpoint string
	// Detail says what differed, for the operator.
	Detail    string
	CheckedAt *time.Time
}

// Verified reports whether the verification lets the transfer count as
// confirmed.
func (v Verification) Verified() bool { return v.State == VerifyVerified }

// ToVerify lists network's confirmed transfers to detected (or reverted)
// intents of at least minCents that still wait on a second source (every
// state but verified), oldest first, at most limit. A held intent stays
// detected (a reverted one reverted), so the list is read from the intents
// in flight.
func (s *Store) ToVerify(ctx context.Context, network string, minCents int64, limit int) ([]Transfer, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+transferColumns+` FROM intents i JOIN payables p ON p.id = i.payable_id
		JOIN transfers t ON t.intent_id = i.id
		WHERE i.network = $1 AND i.status IN ('detected', 'reverted') AND p.amount_cents >= $2
			AND t.status = 'confirmed' AND t.block_hash IS NOT NULL AND t.verify_state IS DISTINCT FROM 'verified'
		ORDER BY t.first_seen_at, t.id LIMIT $3`, network, minCents, limit)
	if err != nil {
		return nil, translate(err)
	}
	return scanTransfers(rows)
}

// SetVerification records what the second source found for transfer id,
// as long as the transfer still is what was checked: in block hash with
// that amount (a new block or content cleared the check). It reports
// whether it wrote, and whether the state changed from what it was (so a
// disagreement is counted once).
func (t *Tx) SetVerification(ctx context.Context, id, hash, amount string, v Verification, now time.Time) (wrote, changed bool, err error) {
	var was *string
	err = t.tx.QueryRow(ctx, `WITH old AS (SELECT verify_state FROM transfers WHERE id = $1 AND block_hash = $2 AND amount = $3::numeric FOR UPDATE)
		UPDATE transfers t SET verify_state = $4, verify_endpoint = $5, verify_detail = $6, verify_checked_at = $7
		FROM old WHERE t.id = $1 RETURNING (SELECT verify_state FROM old)`,
		id, hash, amount, v.State, v.Endpoint, v.Detail, now).Scan(&was)
	if err != nil {
		if err = translate(err); errors.Is(err, ErrNotFound) {
			return false, false, nil
		}
		return false, false, err
	}
	return true, was == nil || *was != v.State, nil
}

// HeldIntent is an intent a second source holds: a confirmed transfer of
// it is not verified.
type HeldIntent struct {
	IntentID string
	// Store is the intent's store: a store's key sees its own only.
	Store string
	// State is the verification state of its transfer (the worst when
	// several: disagrees, unseen, no_verifier, pending, "").
	State string
}

// HeldByVerification lists network's detected (or reverted) intents of at least
// minCents that a confirmed, unverified transfer holds (not paid while it
// is so), at most limit, oldest first.
func (s *Store) HeldByVerification(ctx context.Context, network string, minCents int64, limit int) ([]HeldIntent, error) {
	rows, err := s.pool.Query(ctx, `SELECT t.intent_id, i.store_id,
			(array_agg(coalesce(t.verify_state, '') ORDER BY CASE coalesce(t.verify_state, '') WHEN 'disagrees' THEN 0
				WHEN 'unseen' THEN 1 WHEN 'no_verifier' THEN 2 WHEN 'pending' THEN 3 ELSE 4 END))[1]
		FROM intents i JOIN payables p ON p.id = i.payable_id JOIN transfers t ON t.intent_id = i.id
		WHERE i.network = $1 AND i.status IN ('detected', 'reverted') AND p.amount_cents >= $2
			AND t.status = 'confirmed' AND t.verify_state IS DISTINCT FROM 'verified'
		GROUP BY t.intent_id, i.store_id ORDER BY min(t.first_seen_at), t.intent_id LIMIT $3`, network, minCents, limit)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []HeldIntent
	for rows.Next() {
		var h HeldIntent
		if err := rows.Scan(&h.IntentID, &h.Store, &h.State); err != nil {
			return nil, translate(err)
		}
		out = append(out, h)
	}
	return out, translate(rows.Err())
}

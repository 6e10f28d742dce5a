package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// RateQuote is one recorded quote of the rate book.
type RateQuote struct {
	Symbol     string
	At         time.Time
	USDPerUnit string // a positive decimal
	Sources    []string
}

// RecordQuote keeps a quote of the rate book (idempotent: a quote of the
// same symbol and time is kept once).
func (s *Store) RecordQuote(ctx context.Context, q RateQuote) error {
	if q.Sources == nil {
		q.Sources = []string{}
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO rate_quotes (symbol, at, usd_per_unit, sources) VALUES ($1, $2, $3::numeric, $4)
		ON CONFLICT (symbol, at) DO NOTHING`, q.Symbol, q.At, q.USDPerUnit, q.Sources)
	return translate(err)
}

// QuoteNear returns the recorded quote of symbol nearest to at, no further
// than window from it; ErrNotFound when there is none.
func (t *Tx) QuoteNear(ctx context.Context, symbol string, at time.Time, window time.Duration) (RateQuote, error) {
	q := RateQuote{Symbol: symbol}
	err := t.tx.QueryRow(ctx, `SELECT at, usd_per_unit::text, sources FROM rate_quotes
		WHERE symbol = $1 AND at BETWEEN $2::timestamptz - $3::interval AND $2::timestamptz + $3::interval
		ORDER BY abs(extract(epoch FROM at - $2::timestamptz)), at LIMIT 1`,
		symbol, at, window).Scan(&q.At, &q.USDPerUnit, &q.Sources)
	if errors.Is(err, pgx.ErrNoRows) {
		return q, ErrNotFound
	}
	q.At = q.At.UTC()
	return q, translate(err)
}

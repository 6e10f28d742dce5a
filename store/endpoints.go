package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// EndpointRow is a node endpoint's state as one instance's pool saw it:
// its name, never its URL.
type EndpointRow struct {
	Network, Instance, Name, State              string
	Head, Lag, LatencyMillis, Throttles, Errors int64
	CallsPerMinute, BudgetUsed, DailyBudget     int64
	UpdatedAt                                   time.Time
}

// RecordEndpoints stores the endpoints of network as instance sees them
// at now (an upsert per endpoint: replaying it changes nothing).
func (s *Store) RecordEndpoints(ctx context.Context, network, instance string, rows []EndpointRow, now time.Time) error {
	b := &pgx.Batch{}
	for _, r := range rows {
		b.Queue(`INSERT INTO node_endpoints (network, instance, name, state, head, lag, latency_ms, throttles, errors, calls_per_minute, budget_used, daily_budget, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
ON CONFLICT (network, instance, name) DO UPDATE SET state = EXCLUDED.state, head = EXCLUDED.head, lag = EXCLUDED.lag,
  latency_ms = EXCLUDED.latency_ms, throttles = EXCLUDED.throttles, errors = EXCLUDED.errors,
  calls_per_minute = EXCLUDED.calls_per_minute, budget_used = EXCLUDED.budget_used, daily_budget = EXCLUDED.daily_budget,
  updated_at = EXCLUDED.updated_at`,
			network, instance, r.Name, r.State, r.Head, r.Lag, r.LatencyMillis, r.Throttles, r.Errors, r.CallsPerMinute, r.BudgetUsed, r.DailyBudget, now)
	}
	return translate(s.pool.SendBatch(ctx, b).Close())
}

// Endpoints returns network's endpoints by name, each as the instance that
// recorded it last saw it, recorded since since.
func (s *Store) Endpoints(ctx context.Context, network string, since time.Time) ([]EndpointRow, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT ON (name) network, instance, name, state, head, lag, latency_ms, throttles, errors,
  calls_per_minute, budget_used, daily_budget, updated_at
FROM node_endpoints WHERE network = $1 AND updated_at >= $2 ORDER BY name, updated_at DESC`, network, since)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	var out []EndpointRow
	for rows.Next() {
		var r EndpointRow
		if err := rows.Scan(&r.Network, &r.Instance, &r.Name, &r.State, &r.Head, &r.Lag, &r.LatencyMillis, &r.Throttles, &r.Errors,
			&r.CallsPerMinute, &r.BudgetUsed, &r.DailyBudget, &r.UpdatedAt); err != nil {
			return nil, translate(err)
		}
		out = append(out, r)
	}
	return out, translate(rows.Err())
}

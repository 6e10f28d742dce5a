package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// EventRef is an event's place in the feed and the intent it is about
// ("" for none): what the payment page's live hub needs to know which
// open pages an event changes.
type EventRef struct {
	Seq      int64
	IntentID string
}

// EventIntentsAfter returns up to limit events with seq > after, in seq
// order, without their bodies.
func (s *Store) EventIntentsAfter(ctx context.Context, after int64, limit int) ([]EventRef, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, coalesce(intent_id, '') FROM events WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, translate(err)
	}
	refs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (EventRef, error) {
		var e EventRef
		err := r.Scan(&e.Seq, &e.IntentID)
		return e, err
	})
	return refs, translate(err)
}

// IntentVersion tells whether an intent or what its view shows changed:
// Row changes with every write of the intent's row (its xmin), Transfers
// with every write of one of its transfers (their newest xmin), and Tip is
// its network's node height, from which its transfers' confirmations are
// counted.
type IntentVersion struct {
	Row       string
	Transfers string
	Tip       int64
}

// IntentVersions returns the version of each intent of ids that exists, in
// one query.
func (s *Store) IntentVersions(ctx context.Context, ids []string) (map[string]IntentVersion, error) {
	rows, err := s.pool.Query(ctx, `SELECT i.id, i.xmin::text,
			coalesce((SELECT max(t.xmin::text::bigint) FROM transfers t WHERE t.intent_id = i.id)::text, ''),
			coalesce(c.node_height, 0)
		FROM intents i LEFT JOIN cursors c ON c.network = i.network WHERE i.id = ANY($1)`, ids)
	if err != nil {
		return nil, translate(err)
	}
	defer rows.Close()
	out := make(map[string]IntentVersion, len(ids))
	for rows.Next() {
		var id string
		var v IntentVersion
		if err := rows.Scan(&id, &v.Row, &v.Transfers, &v.Tip); err != nil {
			return nil, translate(err)
		}
		out[id] = v
	}
	return out, translate(rows.Err())
}

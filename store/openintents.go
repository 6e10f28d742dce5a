package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// OpenIntent is an intent of a payable that a customer may still pay or
// is paying: awaiting payment before its deadline, or detected (a payment
// seen, not yet confirmed), whatever its deadline.
type OpenIntent struct {
	ID        string
	Method    string
	ExpiresAt time.Time
}

// openIntentWhere is what makes an intent i open at $now (the parameter
// named by the caller).
func openIntentWhere(now string) string {
	return `(i.status = 'detected' OR (i.status = 'awaiting_payment' AND i.expires_at > ` + now + `))`
}

// openIntentsSQL lists the open intents of the payable ($1 kind, $2
// reference) at $3, oldest first.
var openIntentsSQL = `SELECT i.id, i.method, i.expires_at FROM intents i
	JOIN payables p ON p.id = i.payable_id
	WHERE p.store_id = $4 AND p.kind = $1 AND p.reference = $2 AND ` + openIntentWhere("$3") + `
	ORDER BY i.created_at, i.id`

// OpenIntents lists the open intents of the payable (store, kind,
// reference) at now, oldest first. A creation calls it after
// EnsurePayable, whose row lock makes concurrent creations of one payable
// see each other's intents.
func (t *Tx) OpenIntents(ctx context.Context, store, kind, reference string, now time.Time) ([]OpenIntent, error) {
	rows, err := t.tx.Query(ctx, openIntentsSQL, kind, reference, now, StoreOr(store))
	if err != nil {
		return nil, translate(err)
	}
	return scanOpenIntents(rows)
}

func scanOpenIntents(rows pgx.Rows) ([]OpenIntent, error) {
	defer rows.Close()
	var out []OpenIntent
	for rows.Next() {
		var o OpenIntent
		if err := rows.Scan(&o.ID, &o.Method, &o.ExpiresAt); err != nil {
			return nil, translate(err)
		}
		out = append(out, o)
	}
	return out, translate(rows.Err())
}

// openPayablesSQL is the positions (from 1) of the payables (ids $1) that
// have an open intent at $2. The LATERAL subquery with its LIMIT is looked
// up per payable through the intents_payable index: written as EXISTS, the
// planner may make it a semi-join hashing every intent of the table, and
// a batch of creations grew slower as intents accumulated.
var openPayablesSQL = `SELECT coalesce(array_agg(u.n), '{}') FROM unnest($1::bigint[]) WITH ORDINALITY AS u(id, n)
	CROSS JOIN LATERAL (SELECT 1 FROM intents i WHERE i.payable_id = u.id AND ` + openIntentWhere("$2") + ` LIMIT 1) open`

// takeDerivedUnlessOpenSQL is takeDerivedManySQL for one intent of the
// payable ($4 kind, $5 reference) with method $6, taking nothing when at
// $7 the payable has an open intent of that method or $8 open intents or
// more ($8 = 0: no cap): the creation answers the open intent, or refuses,
// and an address it took would be lost with the commit of that answer.
var takeDerivedUnlessOpenSQL = takeDerivedSQL(`(SELECT count(*) FILTER (WHERE i.method = $6) = 0 AND ($8 = 0 OR count(*) < $8)
		FROM intents i JOIN payables p ON p.id = i.payable_id
		WHERE p.store_id = $9 AND p.kind = $4 AND p.reference = $5 AND ` + openIntentWhere("$7") + `)`)

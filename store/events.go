package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/paywatch/paywatch/payment"
)

// EventsChannel is the NOTIFY channel that wakes event readers and the
// webhook sender; the payload is the new event's seq.
const EventsChannel = "paywatch_events"

// AddressesChannel is the NOTIFY channel that tells scanners of other
// instances that addresses were added; the payload is the network.
const AddressesChannel = "paywatch_addresses"

// Event is one append-only state change.
type Event struct {
	Seq        int64
	ID         string
	Type       payment.EventType
	IntentID   string
	TransferID string
	Account    string
	// Store is the store the event belongs to: its intent's, else its
	// transfer's, else the one its writer named.
	Store     string
	Data      json.RawMessage
	CreatedAt time.Time
}

// AppendEvent appends an event. Call it last in a transaction: it takes the
// event lock, which is held until commit.
func (t *Tx) AppendEvent(ctx context.Context, typ payment.EventType, intentID, transferID, account string, data any, now time.Time) (Event, error) {
	body, err := json.Marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("event %s: %w", typ, err)
	}
	ev := Event{ID: NewID("ev"), Type: typ, IntentID: intentID, TransferID: transferID, Account: account, Data: body, CreatedAt: now}
	t.events = true
	err = t.tx.QueryRow(ctx, appendEventSQL,
		ev.ID, typ, intentID, transferID, account, body, now).Scan(&ev.Seq)
	if err != nil {
		return Event{}, translate(err)
	}
	return ev, nil
}

// QueueAppendEvent is AppendEvent held back until the transaction commits:
// it is sent with COMMIT, after every other statement (queued events in
// call order), so the event lock is held for no round trip at all, however
// much work follows it in the transaction; the commit reports its failure.
// The event is not visible inside the transaction.
func (t *Tx) QueueAppendEvent(typ payment.EventType, intentID, transferID, account string, data any, now time.Time) error {
	body, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("event %s: %w", typ, err)
	}
	t.queueEvent(NewID("ev"), typ, intentID, transferID, account, body, now)
	return nil
}

const appendEventSQL = `SELECT paywatch_append_event($1, $2, $3, $4, $5, $6, $7)`

// eventBatch is the events QueueAppendEvent queued one after the other:
// one statement at commit appends them all, in call order, where each was
// a call of its own (its lock, insert and notification: issue 37 item 3).
type eventBatch struct {
	q                                        *pgx.QueuedQuery
	ids, types, intents, transfers, accounts []string
	bodies                                   []string
	ats                                      []time.Time
}

// queueEvent adds an event to the batch that ends the statements queued
// for commit, or starts one when another statement ends them (a store
// event, a batch of creations): the events keep the order of the calls.
func (t *Tx) queueEvent(id string, typ payment.EventType, intentID, transferID, account string, body []byte, now time.Time) {
	t.events = true
	b := t.eventBatch
	if b == nil || !t.tx.lastAtCommit(b.q) {
		// One event alone is appended as it always was.
		b = &eventBatch{q: t.tx.queueAtCommit(appendEventSQL, id, typ, intentID, transferID, account, body, now)}
		t.eventBatch = b
	} else {
		// paywatch_append_typed_events (migration 0038) appends events
		// of several types in the order given.
		b.q.SQL = `SELECT paywatch_append_typed_events($1, $2, $3, $4, $5, $6::jsonb[], $7)`
	}
	b.ids, b.types, b.intents = append(b.ids, id), append(b.types, string(typ)), append(b.intents, intentID)
	b.transfers, b.accounts = append(b.transfers, transferID), append(b.accounts, account)
	b.bodies, b.ats = append(b.bodies, string(body)), append(b.ats, now)
	if len(b.ids) > 1 {
		b.q.Arguments = []any{b.ids, b.types, b.intents, b.transfers, b.accounts, b.bodies, b.ats}
	}
}

// QueueAppendStoreEvent is QueueAppendEvent for an event with neither
// intent nor transfer (whose store is theirs): it names its store.
func (t *Tx) QueueAppendStoreEvent(store string, typ payment.EventType, account string, data any, now time.Time) error {
	body, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("event %s: %w", typ, err)
	}
	t.events = true
	t.tx.queueAtCommit(`SELECT paywatch_append_store_event($1, $2, '', '', $3, $4, $5, $6)`, NewID("ev"), typ, account, body, now, StoreOr(store))
	return nil
}

// NotifyAddresses tells other instances (at commit) that network has new
// watched addresses.
func (t *Tx) NotifyAddresses(ctx context.Context, network string) error {
	_, err := t.tx.Exec(ctx, `SELECT pg_notify($1, $2)`, AddressesChannel, network)
	return translate(err)
}

// eventsAfterSQL reads events after a seq, of the given types (all when
// empty), in seq order.
const eventsAfterSQL = `SELECT seq, id, type, coalesce(intent_id, ''), coalesce(transfer_id, ''),
	coalesce(account, ''), store_id, data, created_at FROM events
	WHERE seq > $1 AND (coalesce(cardinality($2::text[]), 0) = 0 OR type = ANY($2)) ORDER BY seq LIMIT $3`

// eventsAfterPrefixSQL is eventsAfterSQL for the accounts starting with
// $4 only (an empty $4: every event) of the store $5 (empty: every store).
const eventsAfterPrefixSQL = `SELECT seq, id, type, coalesce(intent_id, ''), coalesce(transfer_id, ''),
	coalesce(account, ''), store_id, data, created_at FROM events
	WHERE seq > $1 AND (coalesce(cardinality($2::text[]), 0) = 0 OR type = ANY($2))
	AND ($5::text = '' OR store_id = $5::text)
	AND ($4::text = '' OR (account <> '' AND left(account, length($4::text)) = $4::text)) ORDER BY seq LIMIT $3`

func collectEvents(rows pgx.Rows, err error) ([]Event, error) {
	if err != nil {
		return nil, translate(err)
	}
	evs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) {
		var e Event
		err := r.Scan(&e.Seq, &e.ID, &e.Type, &e.IntentID, &e.TransferID, &e.Account, &e.Store, &e.Data, &e.CreatedAt)
		return e, err
	})
	return evs, translate(err)
}

// EventsAfter returns up to limit events with seq > after, in seq order,
// optionally only of the given types.
func (s *Store) EventsAfter(ctx context.Context, after int64, types []string, limit int) ([]Event, error) {
	return collectEvents(s.pool.Query(ctx, eventsAfterSQL, after, types, limit))
}

// EventSeqByID returns the seq of an event id (for `after=ev_…` cursors).
func (s *Store) EventSeqByID(ctx context.Context, id string) (int64, error) {
	var seq int64
	err := s.pool.QueryRow(ctx, `SELECT seq FROM events WHERE id = $1`, id).Scan(&seq)
	return seq, translate(err)
}

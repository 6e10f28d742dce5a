package views

import (
	"encoding/json"
	"time"

	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/store"
)

// Event is an event as the feed and webhooks show it (api/openapi.yaml,
// schema Event); data is the changed resource (an intent, a transfer, a
// ledger entry).
type Event struct {
	ID        string            `json:"id"`
	Seq       int64             `json:"seq"`
	Type      payment.EventType `json:"type"`
	CreatedAt time.Time         `json:"created_at"`
	Data      json.RawMessage   `json:"data"`
}

// EventOf renders a stored event.
func EventOf(e store.Event) Event {
	return Event{ID: e.ID, Seq: e.Seq, Type: e.Type, CreatedAt: e.CreatedAt.UTC(), Data: e.Data}
}

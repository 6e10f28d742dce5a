package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/store"
)

// maxEventWait bounds ?wait= below the server's write timeout.
const maxEventWait = 60 * time.Second

// EventsPage is GET /v1/events.
type EventsPage struct {
	Events []intents.EventView `json:"events"`
	// Next is the cursor for the following call: the last event's id, or the
	// request's after when nothing was new.
	Next string `json:"next"`
}

// getEvents serves the event feed in seq order after a cursor (an event id,
// or a seq number). With wait, it long-polls: when nothing is new it
// subscribes to the process's shared LISTEN connection, re-reads, and
// returns as soon as a NOTIFY wakes it with something new, or after wait.
func (s *Server) getEvents(w http.ResponseWriter, r *http.Request, _ store.APIKey) {
	q := r.URL.Query()
	limit, ok := limitParam(w, r, 100, 1000)
	if !ok {
		return
	}
	var wait time.Duration
	if v := q.Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if n, ok := parseCount(v); ok && n <= int64(maxEventWait/time.Second) {
			d, err = time.Duration(n)*time.Second, nil
		}
		if err != nil || v[0] < '0' || v[0] > '9' || d < 0 || d > maxEventWait {
			writeError(w, http.StatusBadRequest, "invalid_request", "wait must be a duration between 0s and 60s, like 30s")
			return
		}
		wait = d
	}
	types := []string{} // never nil: an empty filter means every type
	for _, t := range strings.Split(q.Get("type"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			types = append(types, t)
		}
	}
	after := q.Get("after")
	var seq int64
	switch {
	case after == "":
	case strings.HasPrefix(after, "ev_") && validID("ev", after):
		n, err := s.store.EventSeqByID(r.Context(), after)
		if errors.Is(err, store.ErrNotFound) {
			writeError(w, http.StatusBadRequest, "invalid_request", "after="+after+" is not an event id")
			return
		}
		if err != nil {
			s.internal(w, r, err)
			return
		}
		seq = n
	default:
		n, ok := parseCount(after)
		if !ok {
			writeError(w, http.StatusBadRequest, "invalid_request", "after must be an event id (ev_…) or a seq number")
			return
		}
		seq = n
	}
	evs, err := s.store.EventsAfter(r.Context(), seq, types, limit)
	if err == nil && len(evs) == 0 && wait > 0 {
		evs, err = s.waitEvents(r.Context(), seq, types, limit, wait)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	page := EventsPage{Events: make([]intents.EventView, 0, len(evs)), Next: after}
	for _, e := range evs {
		page.Events = append(page.Events, intents.EventViewOf(e))
	}
	if len(evs) > 0 {
		page.Next = evs[len(evs)-1].ID
	}
	writeJSON(w, 200, page)
}

// waitEvents blocks until events after seq exist or wait passes.
func (s *Server) waitEvents(ctx context.Context, seq int64, types []string, limit int, wait time.Duration) ([]store.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	sub, err := s.store.Notifier().Subscribe(ctx)
	if err != nil {
		return nil, nil // the wait ended before LISTEN was ready: nothing new
	}
	defer sub.Close()
	// Safety net: re-read now and then even without a wake.
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		evs, err := s.store.EventsAfter(ctx, seq, types, limit)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil
			}
			return nil, err
		}
		if len(evs) > 0 {
			return evs, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-sub.C:
		case <-tick.C:
		}
	}
}

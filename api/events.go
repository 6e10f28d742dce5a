package api

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paywatch/paywatch/store"
	"github.com/paywatch/paywatch/views"
)

// maxEventWait bounds ?wait= below the server's write timeout.
const maxEventWait = 60 * time.Second

// EventsPage is GET /v1/events.
type EventsPage struct {
	Events []views.Event `json:"events"`
	// Next is the cursor for the following call: the last event's id, or the
	// request's after when nothing was new.
	Next string `json:"next"`
}

// getEvents serves the event feed in seq order after a cursor (an event id,
// or a seq number). With wait, it long-polls through the process's event
// feed (eventfeed.go), which answers every waiting client from one read per
// wake-up; beyond the waiter caps it answers 429 with Retry-After.
func (s *Server) getEvents(w http.ResponseWriter, r *http.Request, key store.APIKey) {
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
	// A store's key reads its store's events only, in the query (a page
	// is never empty because of another store's traffic, and next never
	// names another store's event); an every-store key reads the store
	// Paywatch-Store names, or without it every store's.
	shop, ok := s.listStore(w, r, key)
	if !ok {
		return
	}
	after := q.Get("after")
	var seq int64
	switch {
	case after == "":
	case strings.HasPrefix(after, "ev_") && validID("ev", after):
		if n, ok := s.feed.seqOf(shop, after); ok {
			seq = n
			break
		}
		// Another store's event id is as unknown as one that never was.
		n, err := s.store.EventSeqOf(r.Context(), shop, after)
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
	var evs []store.Event
	var err error
	if wait > 0 {
		ctx, cancel := context.WithTimeout(r.Context(), wait)
		evs, err = s.feed.Wait(ctx, key.ID, shop, seq, types, limit)
		cancel()
		if errors.Is(err, errTooManyWaiters) {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(s.feed.poll.Seconds()))))
			writeError(w, http.StatusTooManyRequests, "rate_limited",
				"too many long-polls are waiting (for this API key or this instance); retry after Retry-After seconds, or poll without wait")
			return
		}
	} else {
		evs, err = s.store.EventsAfterIn(r.Context(), shop, seq, types, limit)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	page := EventsPage{Events: make([]views.Event, 0, len(evs)), Next: after}
	for _, e := range evs {
		// A key bound to an account prefix gets only its accounts'
		// events; the cursor still moves past the others (of its store).
		if key.Covers(e.Account) {
			page.Events = append(page.Events, views.EventOf(e))
		}
	}
	if len(evs) > 0 {
		page.Next = evs[len(evs)-1].ID
	}
	writeJSON(w, 200, page)
}

package checkout

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/paywatch/paywatch/views"
)

const (
	// keepAlive is how often an idle stream sends a comment, so proxies
	// keep it open.
	keepAlive = 20 * time.Second
	// writeWait bounds one write to a live client.
	writeWait = 10 * time.Second
	// maxStream ends a stream after this long; the browser reconnects
	// (EventSource does by itself) and reads the page's state afresh.
	maxStream = time.Hour
	// retryMillis is the reconnection delay the stream asks for.
	retryMillis = 3000
)

// liveMessage is one state of the page as the live endpoint sends it: the
// status part of the page rendered in the page's language, so the script
// only swaps it in.
type liveMessage struct {
	State Phase  `json:"state"`
	Title string `json:"title"`
	HTML  string `json:"html"`
	// Pay is the instructions' part of the page (the amount may be the
	// rest of an underpayment).
	Pay string `json:"pay"`
	// Open says whether the payment instructions are shown.
	Open bool `json:"open"`
	// Final: nothing more will change; the page closes its stream.
	Final bool `json:"final"`
	// Now is the server's time, for the countdown.
	Now string `json:"now"`
	// AtDeadline and AtDeadlineTitle are the status the page swaps in at
	// the deadline while open (parts.AtDeadline).
	AtDeadline      string `json:"at_deadline,omitempty"`
	AtDeadlineTitle string `json:"at_deadline_title,omitempty"`
	AtDeadlineState Phase  `json:"at_deadline_state,omitempty"`
}

// stream serves GET /pay/{token}/live: server-sent events of the page's
// state, the first at once and one after every change the hub reports,
// until the intent is paid, the hub stops, the client goes or maxStream
// passes. Parameters: lang (a catalogue language; else Accept-Language),
// and the standard Last-Event-ID (the id of the state the page shows: an
// identical first state is not sent again).
//
// A stream is mostly idle, and there may be thousands: its goroutine only
// waits and writes, and reads and renders on a short-lived one (offStack),
// so its stack stays small; nothing is buffered between messages.
func (p *Page) stream(w http.ResponseWriter, r *http.Request, token string, client netip.Prefix) {
	id, ok := p.links.IntentID(token)
	if !ok {
		p.notFound(w, r)
		return
	}
	if !p.live.open(client, token) {
		w.Header().Set("Retry-After", "30")
		p.message(w, r, http.StatusServiceUnavailable, "limited")
		return
	}
	defer p.live.close(client, token)
	ctx := r.Context()
	sub, err := p.hub.Watch(ctx, id)
	if err != nil {
		if errors.Is(err, errStopped) {
			w.Header().Set("Retry-After", "30")
			p.message(w, r, http.StatusServiceUnavailable, "error")
			return
		}
		p.internal(w, r, err)
		return
	}
	defer sub.Close()
	var v views.Intent
	offStack(func() { v, ok = p.intent(w, r, token) }) // after Watch: no change after this read is missed
	if !ok {
		return
	}
	sub.Seen(v)
	l := p.pageLang(r, v.Store, v.Locale)

	rc := http.NewResponseController(w)
	// The server's read and write timeouts are for requests, not streams:
	// a stream bounds each write itself.
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Content-Language", l.Tag)
	w.WriteHeader(http.StatusOK)
	s := &liveStream{p: p, l: l, token: token, last: stateID(r.Header.Get("Last-Event-ID"))}
	final, err := s.send(rc, w, v, "retry: "+strconv.Itoa(retryMillis)+"\n\n")
	if err != nil || final {
		p.streamEnd(r, err)
		return
	}
	// The request stays referenced for the stream's life (up to maxStream)
	// and its headers are of no more use once the answer's are sent: drop
	// them, so a stream holds a few hundred bytes whatever a client sent.
	clear(r.Header)
	alive := time.NewTicker(keepAlive)
	defer alive.Stop()
	end := time.NewTimer(maxStream)
	defer end.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.hub.Done():
			return
		case <-end.C:
			return
		case <-alive.C:
			if err := write(rc, w, keepAliveLine); err != nil {
				p.streamEnd(r, err)
				return
			}
		case <-sub.C:
			nv := sub.Take()
			if nv == nil {
				continue
			}
			if p.now().After(nv.ExpiresAt.Add(p.cfg.LinkLifetime.Duration)) {
				return // the link expired: a reconnection gets the 404
			}
			if final, err := s.send(rc, w, *nv, ""); err != nil || final {
				p.streamEnd(r, err)
				return
			}
		}
	}
}

var keepAliveLine = []byte(": keep-alive\n\n")

// stateID returns id when it has the shape of a state's id (fingerprint:
// 16 hex digits), else "": a stream keeps no more of what a client sent.
func stateID(id string) string {
	if len(id) != 16 || strings.Trim(id, "0123456789abcdef") != "" {
		return ""
	}
	return id
}

// liveStream is what one stream remembers between messages.
type liveStream struct {
	p     *Page
	l     *Lang
	token string
	last  string // the id of the last state sent (or the page's)
}

// send writes v's state after prefix, unless it is the last one sent;
// final reports a state after which nothing changes.
func (s *liveStream) send(rc *http.ResponseController, w http.ResponseWriter, v views.Intent, prefix string) (final bool, err error) {
	var out []byte
	offStack(func() {
		var msg liveMessage
		var id string
		if msg, id, err = s.p.liveMessage(v, s.l, s.token); err != nil {
			return
		}
		final = msg.Final
		var body []byte
		if body, err = json.Marshal(msg); err != nil {
			return
		}
		out = append(out, prefix...)
		if id != s.last {
			s.last = id
			out = append(out, "id: "+id+"\nevent: state\ndata: "...)
			out = append(append(out, body...), "\n\n"...)
		}
	})
	if err != nil || len(out) == 0 {
		return final, err
	}
	return final, write(rc, w, out)
}

// offStack runs f on a new goroutine and waits for it: the deep calls of
// a read or a render grow that goroutine's stack, not the long-lived
// stream's.
func offStack(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

// fingerprint identifies what a state shows: the page carries it, and a
// stream does not send a state the page already shows.
func fingerprint(state Phase, open bool, parts ...string) string {
	h := sha256.New()
	h.Write([]byte(string(state) + "\x00" + strconv.FormatBool(open)))
	for _, s := range parts {
		h.Write([]byte("\x00" + s))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// write sends b to the client within writeWait.
func write(rc *http.ResponseController, w http.ResponseWriter, b []byte) error {
	_ = rc.SetWriteDeadline(time.Now().Add(writeWait))
	if _, err := w.Write(b); err != nil {
		return err
	}
	return rc.Flush()
}

// streamEnd logs why a stream ended early when it is our failure.
func (p *Page) streamEnd(r *http.Request, err error) {
	if err != nil && r.Context().Err() == nil {
		p.log.Warn("payment page stream ended", "path", redactPath(r.URL.Path), "err", err)
	}
}

// liveMessage renders the page's state for the live endpoint.
func (p *Page) liveMessage(v views.Intent, l *Lang, token string) (liveMessage, string, error) {
	now := p.now()
	pt, err := p.parts(v, l, token, now)
	if err != nil {
		return liveMessage{}, "", err
	}
	return liveMessage{State: pt.State, Title: pt.Title, HTML: string(pt.Status), Pay: string(pt.Pay), Open: pt.Open,
		Final: pt.State == Paid, Now: now.UTC().Format(time.RFC3339Nano),
		AtDeadline: string(pt.AtDeadline), AtDeadlineTitle: pt.AtDeadlineTitle, AtDeadlineState: pt.AtDeadlineState}, pt.ID, nil
}

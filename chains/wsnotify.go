package chains

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gorilla/websocket"
	"github.com/paywatch/paywatch/logs"
)

// The websocket notify loop: one Notifier for every node that pushes its
// changes as JSON-RPC notifications over a websocket (btcd, Ethereum's
// eth_subscribe, Solana's pubsub). A chain says where (URL), what to ask
// (Subscribe) and how to read what comes (Parse); WSFeed dials, subscribes,
// reads, keeps the connection alive and wakes, and KeepNotified around it
// redials a lost connection with backoff.

// Defaults of the keep-alive: a ping every wsPingEvery, and a connection that
// has said nothing (no frame, not even a pong) for wsQuietFor is taken as
// lost, so that neither a half-open TCP connection nor a silent server can
// hide a dead node. Subscriptions unanswered after wsQuietFor are lost too.
const (
	wsPingEvery   = 30 * time.Second
	wsQuietFor    = 75 * time.Second
	wsHandshake   = 30 * time.Second
	wsWriteWithin = 10 * time.Second
	// wsMaxFrame bounds one frame: a larger one ends the connection.
	wsMaxFrame = 1 << 20
)

// WSSubscribe is one JSON-RPC request a WSFeed sends once connected.
type WSSubscribe struct {
	// Method is the request's method: "notifyblocks", "eth_subscribe",
	// "slotSubscribe".
	Method string
	// Params are the request's params; nil sends none (agave refuses an
	// empty list for slotSubscribe).
	Params []any
	// Optional marks a subscription the chain can do without: a node that
	// refuses it is logged and the others go on (Ethereum's
	// newPendingTransactions). A refused subscription that is not optional
	// ends the connection; "Method not found" (-32601) is
	// ErrNotifyUnsupported.
	Optional bool
}

// WSNotification is one notification frame: a method and no id.
type WSNotification struct {
	// Method is the frame's method ("blockconnected", "eth_subscription",
	// "slotNotification").
	Method string
	// Sub is the index in WSFeed.Subscribe of the subscription the frame
	// names in params.subscription, matched against the node's answer to
	// that request; -1 where the frame names none (btcd's notifications,
	// whose params are a list). A frame naming a subscription that is not
	// one of ours never reaches Parse.
	Sub int
	// Result is params.result where the frame names a subscription, else
	// the whole params.
	Result json.RawMessage
}

// WSFeed is one chain's notifications on its node's websocket: what the
// chain gives (Name, URL, Header, Unsupported, Subscribe, Parse) and, in
// Notify and Watch, the loop that is the same for every chain. A WSFeed
// serves one connection: a chain's Notify builds a fresh one for each call,
// so that the state Parse keeps (a last slot) starts afresh with each
// subscription.
type WSFeed struct {
	// Name begins every error: "solana", "ethereum", the network.
	Name string
	// URL is the ws:// or wss:// endpoint; empty is ErrNotifyUnsupported.
	// User info in it travels as Basic authorization, never in the URL.
	// No error names more of it than its host.
	URL string
	// Header, when set, gives the headers of each upgrade request (btcd's
	// Basic authorization from its cookie file). Its error is returned as
	// it is: it must not hold a secret.
	Header func() (http.Header, error)
	// Unsupported says whether the HTTP status answering the upgrade means
	// there is no websocket here (ErrNotifyUnsupported: the scanner polls
	// only) rather than a failure to retry; nil means none does.
	Unsupported func(status int) bool
	// JSONRPC is the version sent in the requests; empty is "2.0".
	JSONRPC string
	// Subscribe are the requests sent once connected, with ids 1, 2, … in
	// this order.
	Subscribe []WSSubscribe
	// Parse reads a notification and returns the event it wakes for (a
	// name, for logs and tests), or "" for one that does not wake: no
	// progress, not readable. It must take any bytes as Result without
	// panicking. One goroutine calls it.
	Parse func(WSNotification) (event string)
	// Log, tagged with the network by the chain, receives a refused
	// optional subscription (Info) and ignored frames (Debug); nil
	// discards.
	Log *slog.Logger
	// PingEvery and QuietFor pace the keep-alive (0: 30 s and 75 s).
	PingEvery, QuietFor time.Duration
}

var _ Notifier = WSFeed{}

// Notify is Watch waking on every event.
func (f WSFeed) Notify(ctx context.Context, wake func()) error {
	return f.Watch(ctx, func(string) { wake() })
}

// Watch dials f.URL, sends f.Subscribe and calls note with every event Parse
// finds, until ctx ends (nil) or the connection is lost (an error naming
// what was lost, never the URL). A frame that is not JSON-RPC, an answer to
// no request of ours and a notification of another subscription are
// ignored. A node that says nothing for QuietFor (no frame, no pong to the
// pings) or leaves a subscription unanswered that long is lost.
func (f WSFeed) Watch(ctx context.Context, note func(event string)) error {
	endpoint, hdr, err := f.endpoint()
	if err != nil {
		return err
	}
	log := logs.Or(f.Log)
	// The dialer heeds ctx while it connects, but during the handshake only
	// its timeout: ctx ending closes the connection under it instead.
	var stopDial func() bool
	dialer := websocket.Dialer{HandshakeTimeout: wsHandshake, Proxy: http.ProxyFromEnvironment,
		NetDialContext: func(dctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(dctx, network, addr)
			if err == nil {
				stopDial = context.AfterFunc(ctx, func() { c.Close() })
			}
			return c, err
		}}
	conn, resp, err := dialer.DialContext(ctx, endpoint, hdr)
	if stopDial != nil {
		stopDial()
	}
	if ctx.Err() != nil {
		if conn != nil {
			conn.Close()
		}
		return nil
	}
	if err != nil {
		if resp != nil {
			if f.Unsupported != nil && f.Unsupported(resp.StatusCode) {
				return fmt.Errorf("%s: %w: websocket upgrade answered HTTP %d", f.Name, ErrNotifyUnsupported, resp.StatusCode)
			}
			return fmt.Errorf("%s: websocket upgrade answered HTTP %d", f.Name, resp.StatusCode)
		}
		return fmt.Errorf("%s: dial websocket: %w", f.Name, RedactError(err))
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	s := &wsSession{f: f, conn: conn, log: log, note: note, subs: make([]wsSub, len(f.Subscribe))}
	err = s.run()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// endpoint is f.URL without its user info, and the upgrade's headers.
func (f WSFeed) endpoint() (string, http.Header, error) {
	if f.URL == "" {
		return "", nil, fmt.Errorf("%s: %w: no websocket URL", f.Name, ErrNotifyUnsupported)
	}
	u, err := url.Parse(f.URL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return "", nil, fmt.Errorf("%s: %w: the notify URL is not a ws:// or wss:// URL", f.Name, ErrNotifyUnsupported)
	}
	hdr := http.Header{}
	if f.Header != nil {
		h, err := f.Header()
		if err != nil {
			return "", nil, fmt.Errorf("%s: websocket: %w", f.Name, err)
		}
		if h != nil {
			hdr = h.Clone()
		}
	}
	if u.User != nil {
		if hdr.Get("Authorization") == "" {
			pass, _ := u.User.Password()
			r := http.Request{Header: hdr}
			r.SetBasicAuth(u.User.Username(), pass)
		}
		u.User = nil
	}
	return u.String(), hdr, nil
}

// wsSub is what became of one subscribe request.
type wsSub struct {
	answered bool
	// id is the node's subscription id, compacted; nil when it gave none
	// (null) or refused.
	id []byte
}

// wsSession is one connection of a WSFeed; only run's goroutine touches
// it (the pong handler runs inside its reads).
type wsSession struct {
	f       WSFeed
	conn    *websocket.Conn
	log     *slog.Logger
	note    func(string)
	subs    []wsSub
	pending int
	quiet   time.Duration
	// answerBy is when the subscriptions must have been answered.
	answerBy time.Time
}

// wsFrame is any JSON-RPC frame: an answer (id set) or a notification.
type wsFrame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
	Params json.RawMessage `json:"params"`
}

func (s *wsSession) run() error {
	f := s.f
	s.quiet = f.QuietFor
	if s.quiet <= 0 {
		s.quiet = wsQuietFor
	}
	pingEvery := f.PingEvery
	if pingEvery <= 0 {
		pingEvery = wsPingEvery
	}
	s.conn.SetReadLimit(wsMaxFrame)
	s.pending = len(f.Subscribe)
	s.answerBy = time.Now().Add(s.quiet)
	if err := s.alive(); err != nil {
		return fmt.Errorf("%s: websocket: %w", f.Name, err)
	}
	s.conn.SetPongHandler(func(string) error { return s.alive() })
	version := f.JSONRPC
	if version == "" {
		version = "2.0"
	}
	// A node that does not read cannot hold the writes up for long.
	if err := s.conn.SetWriteDeadline(time.Now().Add(wsWriteWithin)); err != nil {
		return fmt.Errorf("%s: websocket: %w", f.Name, err)
	}
	for i, sub := range f.Subscribe {
		req := map[string]any{"jsonrpc": version, "id": i + 1, "method": sub.Method}
		if sub.Params != nil {
			req["params"] = sub.Params
		}
		if err := s.conn.WriteJSON(req); err != nil {
			return fmt.Errorf("%s: websocket: %s: %w", f.Name, sub.Method, RedactError(err))
		}
	}

	pingDone := make(chan struct{})
	defer close(pingDone)
	go func() {
		t := time.NewTicker(pingEvery)
		defer t.Stop()
		for {
			select {
			case <-pingDone:
				return
			case <-t.C:
				// WriteControl may run beside the reader; a failed ping
				// shows as a read error or a silence soon after.
				_ = s.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(wsWriteWithin))
			}
		}
	}()

	for {
		_, data, err := s.conn.ReadMessage()
		if err != nil {
			var ne net.Error
			switch {
			case errors.As(err, &ne) && ne.Timeout() && s.pending > 0:
				return fmt.Errorf("%s: websocket: %s unanswered after %s", f.Name, s.unanswered(), s.quiet)
			case errors.As(err, &ne) && ne.Timeout():
				return fmt.Errorf("%s: websocket silent for %s (no frame, no pong): subscription lost", f.Name, s.quiet)
			}
			return fmt.Errorf("%s: websocket subscription lost: %w", f.Name, RedactError(err))
		}
		if err := s.alive(); err != nil {
			return fmt.Errorf("%s: websocket: %w", f.Name, err)
		}
		if err := s.frame(data); err != nil {
			return err
		}
	}
}

// alive moves the read deadline to QuietFor from now, or to answerBy while
// a subscription is unanswered and that is sooner.
func (s *wsSession) alive() error {
	d := time.Now().Add(s.quiet)
	if s.pending > 0 && s.answerBy.Before(d) {
		d = s.answerBy
	}
	return s.conn.SetReadDeadline(d)
}

// unanswered names the first subscription still waiting for its answer.
func (s *wsSession) unanswered() string {
	for i, sub := range s.subs {
		if !sub.answered {
			return s.f.Subscribe[i].Method
		}
	}
	return "subscription"
}

// frame handles one frame; an error ends the connection.
func (s *wsSession) frame(data []byte) error {
	var m wsFrame
	if err := json.Unmarshal(data, &m); err != nil {
		s.log.Debug("websocket frame ignored: not JSON-RPC", "bytes", len(data))
		return nil
	}
	if len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null")) {
		return s.answer(m)
	}
	if m.Method == "" {
		s.log.Debug("websocket frame ignored: neither an answer nor a notification", "bytes", len(data))
		return nil
	}
	n := WSNotification{Method: m.Method, Sub: -1, Result: m.Params}
	var named struct {
		Subscription json.RawMessage `json:"subscription"`
		Result       json.RawMessage `json:"result"`
	}
	if p := bytes.TrimSpace(m.Params); len(p) > 0 && p[0] == '{' && json.Unmarshal(p, &named) == nil && named.Subscription != nil {
		n.Sub = s.subscription(named.Subscription)
		if n.Sub < 0 {
			s.log.Debug("websocket notification ignored: not one of our subscriptions", "method", short(m.Method))
			return nil
		}
		n.Result = named.Result
	}
	if ev := s.f.Parse(n); ev != "" {
		s.note(ev)
	}
	return nil
}

// answer handles the node's answer to a request.
func (s *wsSession) answer(m wsFrame) error {
	id, err := strconv.ParseUint(string(m.ID), 10, 32)
	if err != nil || id < 1 || id > uint64(len(s.subs)) || s.subs[id-1].answered {
		s.log.Debug("websocket answer ignored: to no request of ours")
		return nil
	}
	i := int(id - 1)
	req := s.f.Subscribe[i]
	s.subs[i].answered = true
	s.pending--
	if err := s.alive(); err != nil {
		return fmt.Errorf("%s: websocket: %w", s.f.Name, err)
	}
	if m.Error != nil {
		switch {
		case req.Optional:
			s.log.Info("node refuses a subscription; waking on the others", "method", req.Method,
				"code", m.Error.Code, "err", short(RedactText(m.Error.Message)))
			return nil
		case m.Error.Code == -32601:
			return fmt.Errorf("%s: %w: %s: %s", s.f.Name, ErrNotifyUnsupported, req.Method, short(RedactText(m.Error.Message)))
		}
		return fmt.Errorf("%s: %s refused: %d %s", s.f.Name, req.Method, m.Error.Code, short(RedactText(m.Error.Message)))
	}
	var sub any
	if err := json.Unmarshal(m.Result, &sub); err != nil {
		return fmt.Errorf("%s: %s answered no result", s.f.Name, req.Method)
	}
	switch sub.(type) {
	case nil:
	case string, float64, bool:
		var b bytes.Buffer
		if json.Compact(&b, m.Result) == nil {
			s.subs[i].id = b.Bytes()
		}
	default:
		return fmt.Errorf("%s: %s answered %.40q, want a subscription id", s.f.Name, req.Method, m.Result)
	}
	return nil
}

// short cuts what a node wrote to a length fit for a log line or an error.
func short(s string) string {
	const most = 160
	if len(s) <= most {
		return s
	}
	return s[:most] + "…"
}

// subscription is the index of the subscription whose id is raw, or -1.
func (s *wsSession) subscription(raw json.RawMessage) int {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return -1
	}
	for i, sub := range s.subs {
		if sub.id != nil && bytes.Equal(sub.id, b.Bytes()) {
			return i
		}
	}
	return -1
}

// NotifyURL is the websocket a chain's Notify dials: the configured one,
// else the node's RPC URL made a websocket URL (WebsocketURL), else "" (no
// notifications: the scanner polls).
func NotifyURL(configured, rpcURL string) string {
	if configured != "" {
		return configured
	}
	if u := WebsocketURL(rpcURL); u != nil {
		return u.String()
	}
	return ""
}

// WebsocketURL is raw with http made ws and https made wss (ws and wss stay
// as they are), or nil for a URL of another scheme or none: the websocket a
// node serves beside its HTTP JSON-RPC by default.
func WebsocketURL(raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	switch u.Scheme {
	case "ws", "wss":
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return nil
	}
	return u
}

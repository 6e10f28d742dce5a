package chainstest

import (
	"encoding/binary"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// wsNode is a misbehaving websocket node for the notify suite: each
// connection runs the test's script, which answers, notifies, trickles,
// drops, refuses or falls silent as the test wants.
type wsNode struct {
	c      WSChain
	srv    *httptest.Server
	script func(p *wsPeer)
	// stop ends every script still waiting when the test ends.
	stop chan struct{}

	mu    sync.Mutex
	dials []time.Time
	auth  []string
}

// newWSNode serves script on a loopback port until the test ends.
func newWSNode(t *testing.T, c WSChain, script func(p *wsPeer)) *wsNode {
	t.Helper()
	n := &wsNode{c: c, script: script, stop: make(chan struct{})}
	n.srv = httptest.NewServer(http.HandlerFunc(n.serve))
	t.Cleanup(func() {
		close(n.stop)
		n.srv.Close()
	})
	return n
}

// url is the node's websocket URL with path (and query) added.
func (n *wsNode) url(path string) string {
	return "ws://" + strings.TrimPrefix(n.srv.URL, "http://") + path
}

// dialTimes are the times of the upgrade requests so far.
func (n *wsNode) dialTimes() []time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]time.Time(nil), n.dials...)
}

// authorizations are the Authorization headers of the upgrade requests.
func (n *wsNode) authorizations() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.auth...)
}

func (n *wsNode) serve(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	n.dials = append(n.dials, time.Now())
	n.auth = append(n.auth, r.Header.Get("Authorization"))
	k := len(n.dials)
	n.mu.Unlock()
	p := &wsPeer{n: n, k: k, w: w, r: r}
	n.script(p)
	if p.conn != nil {
		p.conn.Close()
	}
}

// wantDials fails t unless there were want connections; why says why.
func (n *wsNode) wantDials(t *testing.T, want int, why ...string) {
	t.Helper()
	if d := len(n.dialTimes()); d != want {
		t.Errorf("%d connections, want %d %v", d, want, why)
	}
}

// wsPeer is the node's side of one connection, numbered k from 1. Its
// writes ignore errors: the client may be gone, which the test sees on its
// side.
type wsPeer struct {
	n    *wsNode
	k    int
	w    http.ResponseWriter
	r    *http.Request
	conn *websocket.Conn
}

var wsUpgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// accept upgrades the connection; false if that failed.
func (p *wsPeer) accept() bool {
	if p.conn != nil {
		return true
	}
	conn, err := wsUpgrader.Upgrade(p.w, p.r, nil)
	if err != nil {
		return false
	}
	p.conn = conn
	return true
}

// refuse answers the upgrade with an HTTP status instead.
func (p *wsPeer) refuse(status int) { http.Error(p.w, http.StatusText(status), status) }

// wsRequest is a request from the client.
type wsRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// requests accepts and reads the client's subscribe requests (as many as
// its feed sends); nil if the connection ended first.
func (p *wsPeer) requests() []wsRequest {
	if !p.accept() {
		return nil
	}
	want := len(p.n.c.Feed("").Subscribe)
	var reqs []wsRequest
	for len(reqs) < want {
		_, data, err := p.conn.ReadMessage()
		if err != nil {
			return nil
		}
		var r wsRequest
		if json.Unmarshal(data, &r) == nil && r.Method != "" {
			reqs = append(reqs, r)
		}
	}
	return reqs
}

// subscribe reads the subscribe requests and answers each as the chain's
// node does; refuse names the indexes to answer with an error of code
// instead.
func (p *wsPeer) subscribe(code int, refuse ...int) bool {
	reqs := p.requests()
	if reqs == nil {
		return false
	}
	for i, r := range reqs {
		if slices.Contains(refuse, i) {
			p.sendJSON(map[string]any{"jsonrpc": "2.0", "id": r.ID, "error": map[string]any{"code": code, "message": "refused by the test"}})
			continue
		}
		p.send(p.answer(r))
	}
	return true
}

// answer is the chain's node's answer to r.
func (p *wsPeer) answer(r wsRequest) string {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.ID, "result": p.n.c.Answer(r.Method, r.Params), "error": nil})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// note sends the chain's k-th notification.
func (p *wsPeer) note(k int) {
	frame, _ := p.n.c.Note(k)
	p.send(frame)
}

// serve subscribes, sends notes 1 to notes and idles: a node that works.
func (p *wsPeer) serve(notes int) {
	if p.subscribe(0) {
		for k := 1; k <= notes; k++ {
			p.note(k)
		}
		p.idle()
	}
}

func (p *wsPeer) sendJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	p.send(string(b))
}

// send writes a text frame.
func (p *wsPeer) send(frame string) {
	if p.accept() {
		_ = p.conn.WriteMessage(websocket.TextMessage, []byte(frame))
	}
}

// sendBinary writes a binary frame.
func (p *wsPeer) sendBinary(b []byte) {
	if p.accept() {
		_ = p.conn.WriteMessage(websocket.BinaryMessage, b)
	}
}

// trickle writes a text frame a few bytes at a time, pausing between them,
// straight onto the TCP connection (a server's frames are not masked).
func (p *wsPeer) trickle(frame string, every time.Duration) {
	if !p.accept() {
		return
	}
	b := []byte{0x81} // FIN, text
	switch n := len(frame); {
	case n < 126:
		b = append(b, byte(n))
	case n < 1<<16:
		b = append(b, 126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	b = append(b, frame...)
	raw := p.conn.UnderlyingConn()
	for len(b) > 0 {
		k := min(3, len(b))
		if _, err := raw.Write(b[:k]); err != nil {
			return
		}
		b = b[k:]
		time.Sleep(every)
	}
}

// drop closes the TCP connection without a close frame, as a crashing node
// or a proxy does.
func (p *wsPeer) drop() {
	if p.conn != nil {
		p.conn.UnderlyingConn().Close()
	}
}

// closeFrame ends the connection with a close frame, as a node that shuts
// down cleanly does.
func (p *wsPeer) closeFrame() {
	if p.accept() {
		_ = p.conn.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseGoingAway, "restarting"), time.Now().Add(time.Second))
		p.drop()
	}
}

// idle reads (and so answers pings with pongs) until the client closes
// the connection or the test ends.
func (p *wsPeer) idle() {
	if !p.accept() {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if _, _, err := p.conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
	select {
	case <-done:
	case <-p.n.stop:
	}
}

// silent neither reads nor writes (so answers no ping) until the test
// ends: a half-open connection or a hung node.
func (p *wsPeer) silent() { <-p.n.stop }

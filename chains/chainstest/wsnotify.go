package chainstest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains"
)

// WSChain is one chain's websocket notifications as the notify suite
// (RunWS) drives them: the chain's own feed, and what its node says.
type WSChain struct {
	// Feed is the chain's chains.WSFeed on url, a fresh one per call as
	// the chain's Notify builds them.
	Feed func(url string) chains.WSFeed
	// Answer is the node's result for a subscribe request (a subscription
	// id, or null where the node gives none).
	Answer func(method string, params json.RawMessage) any
	// Note is the k-th notification of a connection (k from 1), which must
	// wake, and the index in the feed's Subscribe of the subscription it
	// belongs to (-1 where the node names none).
	Note func(k int) (frame string, sub int)
	// Strays are well-formed frames of this chain's protocol that must
	// not wake, sent after Note(1): another subscription, no progress, a
	// result of the wrong shape.
	Strays []string
}

// garbage are frames no chain may wake on or break on.
var garbage = []string{
	"", "not json", "{", "}", "null", "[]", "{}", "0", `"id"`, "[1,2,3]",
	`{"id":99,"result":1}`, `{"id":1,"result":"again"}`, `{"id":"1","result":"x"}`, `{"id":-1,"result":1}`,
	`{"id":1.5,"result":1}`, `{"id":{},"result":1}`, `{"id":null}`, `{"method":""}`, `{"method":123}`,
	`{"method":null,"params":[]}`, `{"method":"x","params":{"subscription":"0xdead","result":{}}}`,
	`{"method":"eth_subscription","params":{"subscription":"0xdead","result":{"number":"0x1"}}}`,
	`{"method":"slotNotification","params":{"subscription":999999,"result":{"root":18446744073709551615}}}`,
	`{"method":"slotNotification","params":{"subscription":{},"result":{"root":1}}}`,
	`{"method":"eth_subscription","params":{"subscription":null,"result":{}}}`,
	`{"method":"blockconnected","params":{"subscription":null}}`,
	`{"jsonrpc":"2.0","method":"x","params":{"subscription":[1],"result":1}}`,
	strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
	"\xff\xfe\x00garbage",
}

// wsRun is the feed kept up by chains.KeepNotified against a wsNode.
type wsRun struct {
	// events receives every event the feed woke for.
	events chan string
	// ends receives every Watch's return.
	ends chan error
	// finished is closed when KeepNotified has returned result.
	finished chan struct{}
	result   error
	cancel   context.CancelFunc
	// logs is the file the feed and KeepNotified log to (an *os.File
	// takes concurrent writes).
	logs *os.File
}

// wsTiming paces a run: the feed's keep-alive and KeepNotified's backoff.
type wsTiming struct {
	ping, quiet, minBackoff, maxBackoff time.Duration
}

var wsFast = wsTiming{ping: 500 * time.Millisecond, quiet: 3 * time.Second, minBackoff: 20 * time.Millisecond, maxBackoff: 200 * time.Millisecond}

// runWS starts chains.KeepNotified on c's feed at url; it is stopped when
// the test ends.
func runWS(t *testing.T, c WSChain, url string, tm wsTiming) *wsRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() }) // after KeepNotified has stopped
	r := &wsRun{events: make(chan string, 1000), ends: make(chan error, 1000), finished: make(chan struct{}), cancel: cancel, logs: logs}
	log := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	n := notifierFunc(func(ctx context.Context, wake func()) error {
		f := c.Feed(url)
		f.PingEvery, f.QuietFor, f.Log = tm.ping, tm.quiet, log
		err := f.Watch(ctx, func(ev string) { r.events <- ev; wake() })
		r.ends <- err
		return err
	})
	go func() {
		defer close(r.finished)
		r.result = chains.KeepNotified(ctx, n, func() {}, chains.NotifyConfig{MinBackoff: tm.minBackoff, MaxBackoff: tm.maxBackoff}, log)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.finished:
		case <-time.After(5 * time.Second):
			t.Error("KeepNotified still running 5 s after the test")
		}
	})
	return r
}

// logText is what was logged so far.
func (r *wsRun) logText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(r.logs.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// event waits for the next event.
func (r *wsRun) event(t *testing.T, what string) string {
	t.Helper()
	select {
	case ev := <-r.events:
		return ev
	case <-r.finished:
		t.Fatalf("%s: KeepNotified returned %v", what, r.result)
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no event in 10 s", what)
	}
	return ""
}

// end waits for the next Watch to return, with an error.
func (r *wsRun) end(t *testing.T, what string, within time.Duration) error {
	t.Helper()
	select {
	case err := <-r.ends:
		if err == nil {
			t.Fatalf("%s: Watch returned nil before the context ended", what)
		}
		return err
	case <-time.After(within):
		t.Fatalf("%s: the connection was not given up within %s", what, within)
	}
	return nil
}

// noMore fails t if an event or a Watch return is pending.
func (r *wsRun) noMore(t *testing.T, what string) {
	t.Helper()
	select {
	case ev := <-r.events:
		t.Errorf("%s: woken for %q", what, ev)
	case err := <-r.ends:
		t.Errorf("%s: the connection ended: %v", what, err)
	default:
	}
}

// stop cancels the run and fails t unless KeepNotified returns nil within
// a second.
func (r *wsRun) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case <-r.finished:
		if r.result != nil {
			t.Fatalf("KeepNotified returned %v after cancel, want nil", r.result)
		}
	case <-time.After(time.Second):
		t.Fatal("KeepNotified still running a second after cancel")
	}
}

// wsProperties are RunWS's subtests.
var wsProperties = []struct {
	name  string
	check func(t *testing.T, c WSChain)
}{
	{"WakesOnEveryNotification", wsWakes},
	{"IgnoresGarbage", wsIgnoresGarbage},
	{"SurvivesRandomFrames", wsRandomFrames},
	{"SlowFramesAndSlowReads", wsSlow},
	{"RedialsWithBackoffAfterDrops", wsRedials},
	{"SilentConnectionIsRedialed", wsSilent},
	{"UnansweredSubscriptionIsRedialed", wsUnanswered},
	{"PongsKeepAQuietConnection", wsPongs},
	{"OversizeFrameIsALostConnection", wsOversize},
	{"RefusedSubscription", wsRefused},
	{"StopsPromptlyWhenContextEnds", wsStops},
	{"NoSecretInErrorsOrLogs", wsNoSecret},
}

// RunWS runs the websocket notify suite against c's feed: a node that
// drops connections, trickles frames, reads slowly, sends garbage, falls
// silent (no pong) or refuses. The feed, kept up by chains.KeepNotified,
// must wake on every valid notification and on nothing else, redial with
// backoff, notice a silent connection, never panic and stop promptly when
// its context ends.
func RunWS(t *testing.T, c WSChain) {
	for _, p := range wsProperties {
		t.Run(p.name, func(t *testing.T) { p.check(t, c) })
	}
}

func wsWakes(t *testing.T, c WSChain) {
	const notes = 6
	n := newWSNode(t, c, func(p *wsPeer) { p.serve(notes) })
	r := runWS(t, c, n.url("/"), wsFast)
	for k := 1; k <= notes; k++ {
		if ev := r.event(t, "note"); ev == "" {
			t.Fatalf("note %d: an empty event", k)
		}
	}
	r.noMore(t, "after the notes")
	n.wantDials(t, 1)
	r.stop(t)
}

func wsIgnoresGarbage(t *testing.T, c WSChain) {
	n := newWSNode(t, c, func(p *wsPeer) {
		// Garbage before the answers too: the answers must still count.
		p.send("garbage before the subscription")
		if !p.subscribe(0) {
			return
		}
		p.note(1)
		for _, g := range append(append([]string{}, garbage...), c.Strays...) {
			p.send(g)
		}
		p.sendBinary([]byte{0, 1, 2, 0xff})
		p.note(2)
		p.idle()
	})
	r := runWS(t, c, n.url("/"), wsFast)
	r.event(t, "the first note")
	// Frames are read in order: once the second note has woken, every
	// garbage frame before it has been read and ignored.
	r.event(t, "the second note, after the garbage")
	r.noMore(t, "garbage")
	n.wantDials(t, 1, "garbage must not end the connection")
	if !strings.Contains(r.logText(t), "ignored") {
		t.Errorf("no debug line about ignored frames:\n%s", r.logText(t))
	}
	r.stop(t)
}

// wsRandomFrames sends random bytes and corrupted copies of valid
// notifications: the loop must neither panic nor give the connection up.
func wsRandomFrames(t *testing.T, c WSChain) {
	rng := rand.New(rand.NewPCG(25, 6))
	var frames []string
	for i := 0; i < 300; i++ {
		note, _ := c.Note(1 + i%4)
		b := []byte(note)
		switch i % 3 {
		case 0: // random bytes
			b = make([]byte, rng.IntN(200))
			for j := range b {
				b[j] = byte(rng.UintN(256))
			}
		case 1: // a valid note with bytes changed
			const alphabet = "{}[]\":,0a-9. \x00"
			for range 1 + rng.IntN(4) {
				b[rng.IntN(len(b))] = alphabet[rng.IntN(len(alphabet))]
			}
		case 2: // a valid note cut short
			b = b[:rng.IntN(len(b))]
		}
		frames = append(frames, string(b))
	}
	n := newWSNode(t, c, func(p *wsPeer) {
		if !p.subscribe(0) {
			return
		}
		for _, f := range frames {
			p.send(f)
		}
		p.idle()
	})
	r := runWS(t, c, n.url("/"), wsFast)
	// Whatever the corrupted notes woke, the connection must stay up.
	deadline := time.After(time.Second)
	for quiet := false; !quiet; {
		select {
		case <-r.events:
		case err := <-r.ends:
			t.Fatalf("random frames ended the connection: %v", err)
		case <-deadline:
			quiet = true
		}
	}
	n.wantDials(t, 1)
	r.stop(t)
}

// wsSlow: the node reads the subscribe requests late and trickles its
// answers and notes a few bytes at a time; the feed still subscribes and
// wakes on the one connection.
func wsSlow(t *testing.T, c WSChain) {
	n := newWSNode(t, c, func(p *wsPeer) {
		if !p.accept() {
			return
		}
		time.Sleep(300 * time.Millisecond) // a node slow to read
		reqs := p.requests()
		if reqs == nil {
			return
		}
		for _, req := range reqs {
			p.trickle(p.answer(req), 2*time.Millisecond)
		}
		for k := 1; k <= 2; k++ {
			frame, _ := c.Note(k)
			p.trickle(frame, 2*time.Millisecond)
		}
		p.idle()
	})
	r := runWS(t, c, n.url("/"), wsFast)
	r.event(t, "the first trickled note")
	r.event(t, "the second trickled note")
	n.wantDials(t, 1)
	r.stop(t)
}

// wsRedials: every way a connection can be lost ends Watch with an error,
// and KeepNotified dials again after a delay that at least doubles (of
// which half may be jitter), each new connection waking again.
func wsRedials(t *testing.T, c WSChain) {
	// woken lets the node end a connection once its note has woken.
	woken := make(chan struct{}, 2)
	wait := func(p *wsPeer) {
		select {
		case <-woken:
		case <-p.n.stop:
		}
	}
	n := newWSNode(t, c, func(p *wsPeer) {
		switch p.k {
		case 1: // a note, then the TCP connection is cut
			if p.subscribe(0) {
				p.note(1)
				wait(p)
				p.drop()
			}
		case 2: // a note, then a clean close frame
			if p.subscribe(0) {
				p.note(1)
				wait(p)
				p.closeFrame()
			}
		case 3: // cut before answering
			if p.requests() != nil {
				p.drop()
			}
		case 4: // the upgrade refused by an overloaded proxy
			p.refuse(http.StatusServiceUnavailable)
		case 5: // the upgrade hijacked and cut
			if hj, ok := p.w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					conn.Close()
				}
			}
		default:
			p.serve(1)
		}
	})
	tm := wsFast
	tm.minBackoff, tm.maxBackoff = 40*time.Millisecond, 2*time.Second
	r := runWS(t, c, n.url("/"), tm)
	for k := 1; k <= 5; k++ {
		if k <= 2 {
			r.event(t, fmt.Sprintf("connection %d", k))
			woken <- struct{}{}
		}
		err := r.end(t, fmt.Sprintf("connection %d", k), 5*time.Second)
		if errors.Is(err, chains.ErrNotifyUnsupported) {
			t.Fatalf("connection %d: %v, want a lost subscription", k, err)
		}
		t.Logf("connection %d: %v", k, err)
	}
	r.event(t, "connection 6, after the losses")
	dials := n.dialTimes()
	if len(dials) != 6 {
		t.Fatalf("%d connections, want 6", len(dials))
	}
	for i := 1; i < len(dials); i++ {
		// The delay after the i-th failure is min·2^(i−1), at least half
		// of it kept by the jitter.
		least := tm.minBackoff << (i - 1) / 2
		if gap := dials[i].Sub(dials[i-1]); gap < least {
			t.Errorf("dial %d came %s after dial %d, want at least %s (backoff)", i+1, gap, i, least)
		}
	}
	if !strings.Contains(r.logText(t), "node notifications lost") {
		t.Errorf("the losses were not logged:\n%s", r.logText(t))
	}
	r.stop(t)
}

// wsSilent: a node that stops reading and writing (no frame, no pong) is
// noticed after QuietFor and dialed again.
func wsSilent(t *testing.T, c WSChain) {
	n := newWSNode(t, c, func(p *wsPeer) {
		if !p.subscribe(0) {
			return
		}
		p.note(1)
		if p.k == 1 {
			p.silent()
			return
		}
		p.idle()
	})
	tm := wsFast
	tm.ping, tm.quiet = 50*time.Millisecond, 400*time.Millisecond
	r := runWS(t, c, n.url("/"), tm)
	r.event(t, "connection 1")
	began := time.Now()
	err := r.end(t, "the silent connection", 5*time.Second)
	if !strings.Contains(err.Error(), "silent") {
		t.Errorf("silent connection: %v, want it to say so", err)
	}
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("the silence was noticed after %s (QuietFor %s)", took, tm.quiet)
	}
	r.event(t, "connection 2")
	r.stop(t)
}

// wsUnanswered: a node that reads (and pongs) but never answers the
// subscriptions is given up after QuietFor, and dialed again.
func wsUnanswered(t *testing.T, c WSChain) {
	n := newWSNode(t, c, func(p *wsPeer) {
		if p.k == 1 {
			p.idle()
			return
		}
		p.serve(1)
	})
	tm := wsFast
	tm.ping, tm.quiet = 50*time.Millisecond, 400*time.Millisecond
	r := runWS(t, c, n.url("/"), tm)
	err := r.end(t, "the unanswered subscription", 5*time.Second)
	if !strings.Contains(err.Error(), "unanswered") {
		t.Errorf("unanswered subscription: %v, want it to say so", err)
	}
	r.event(t, "connection 2")
	r.stop(t)
}

// wsPongs: a connection with no notification for several QuietFor stays up
// as long as the node answers the pings.
func wsPongs(t *testing.T, c WSChain) {
	hold := make(chan struct{})
	n := newWSNode(t, c, func(p *wsPeer) {
		if !p.subscribe(0) {
			return
		}
		go func() {
			<-hold
			p.note(1)
		}()
		p.idle()
	})
	tm := wsFast
	tm.ping, tm.quiet = 50*time.Millisecond, 300*time.Millisecond
	r := runWS(t, c, n.url("/"), tm)
	time.Sleep(5 * tm.quiet)
	r.noMore(t, "a quiet node that answers pings")
	close(hold)
	r.event(t, "the note after the quiet")
	n.wantDials(t, 1)
	r.stop(t)
}

// wsOversize: a frame over the limit ends the connection (it is not read
// into memory), which is dialed again.
func wsOversize(t *testing.T, c WSChain) {
	n := newWSNode(t, c, func(p *wsPeer) {
		if !p.subscribe(0) {
			return
		}
		if p.k == 1 {
			p.send(`{"method":"x","params":"` + strings.Repeat("a", 2<<20) + `"}`)
		}
		p.note(1)
		p.idle()
	})
	r := runWS(t, c, n.url("/"), wsFast)
	if err := r.end(t, "the oversize frame", 5*time.Second); !strings.Contains(err.Error(), "lost") {
		t.Errorf("oversize frame: %v, want a lost subscription", err)
	}
	r.event(t, "connection 2")
	r.stop(t)
}

// wsRefused: "Method not found" for a required subscription is
// ErrNotifyUnsupported (KeepNotified stops: the scanner polls); another
// refusal is a loss to retry; an optional subscription refused leaves the
// others waking.
func wsRefused(t *testing.T, c WSChain) {
	subs := c.Feed("").Subscribe
	t.Run("MethodNotFound", func(t *testing.T) {
		n := newWSNode(t, c, func(p *wsPeer) { p.subscribe(-32601, 0); p.idle() })
		r := runWS(t, c, n.url("/"), wsFast)
		if err := r.end(t, "refused", 5*time.Second); !errors.Is(err, chains.ErrNotifyUnsupported) {
			t.Fatalf("Method not found: %v, want ErrNotifyUnsupported", err)
		}
		select {
		case <-r.finished:
			if r.result != nil {
				t.Fatalf("KeepNotified: %v", r.result)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("KeepNotified goes on after ErrNotifyUnsupported")
		}
	})
	t.Run("ServerError", func(t *testing.T) {
		n := newWSNode(t, c, func(p *wsPeer) {
			if p.k == 1 {
				p.subscribe(-32000, 0)
				p.idle()
				return
			}
			p.serve(1)
		})
		r := runWS(t, c, n.url("/"), wsFast)
		if err := r.end(t, "refused", 5*time.Second); errors.Is(err, chains.ErrNotifyUnsupported) || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("server error: %v, want a refusal to retry", err)
		}
		r.event(t, "connection 2")
		r.stop(t)
	})
	var optional []int
	for i, s := range subs {
		if s.Optional {
			optional = append(optional, i)
		}
	}
	if len(optional) == 0 {
		return
	}
	t.Run("OptionalRefused", func(t *testing.T) {
		// Notes of every subscription, ending with one of an accepted one:
		// once it has woken, every note before it has been read.
		notes := 6
		for _, sub := c.Note(notes); slices.Contains(optional, sub); _, sub = c.Note(notes) {
			notes++
		}
		n := newWSNode(t, c, func(p *wsPeer) {
			if p.subscribe(-32601, optional...) {
				for k := 1; k <= notes; k++ {
					p.note(k)
				}
				p.idle()
			}
		})
		r := runWS(t, c, n.url("/"), wsFast)
		for k := 1; k <= notes; k++ {
			if _, sub := c.Note(k); !slices.Contains(optional, sub) {
				r.event(t, "a note of a subscription accepted")
			}
		}
		r.noMore(t, "notes of the refused subscription")
		if !strings.Contains(r.logText(t), "refuses a subscription") {
			t.Errorf("the refusal was not logged:\n%s", r.logText(t))
		}
		r.stop(t)
	})
}

// wsStops: ending the context stops the feed promptly wherever it is:
// reading, waiting for a handshake, waiting for answers, backing off.
func wsStops(t *testing.T, c WSChain) {
	t.Run("Reading", func(t *testing.T) {
		closed := make(chan struct{})
		n := newWSNode(t, c, func(p *wsPeer) {
			if p.subscribe(0) {
				p.note(1)
				p.idle()
				close(closed)
			}
		})
		r := runWS(t, c, n.url("/"), wsFast)
		r.event(t, "note")
		r.stop(t)
		select {
		case <-closed:
		case <-time.After(time.Second):
			t.Error("the node's connection is still open a second after cancel")
		}
	})
	t.Run("Handshake", func(t *testing.T) {
		// A listener that accepts and never answers the upgrade.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var conns []net.Conn
		asked := make(chan struct{}, 10)
		go func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				conns = append(conns, conn)
				mu.Unlock()
				go func() { // read the upgrade request, answer nothing
					if _, err := http.ReadRequest(bufio.NewReader(conn)); err == nil {
						asked <- struct{}{}
					}
				}()
			}
		}()
		t.Cleanup(func() {
			ln.Close()
			mu.Lock()
			for _, c := range conns {
				c.Close()
			}
			mu.Unlock()
		})
		r := runWS(t, c, "ws://"+ln.Addr().String()+"/", wsFast)
		select {
		case <-asked:
		case <-time.After(5 * time.Second):
			t.Fatal("no upgrade request")
		}
		r.stop(t)
	})
	t.Run("Unanswered", func(t *testing.T) {
		n := newWSNode(t, c, func(p *wsPeer) { p.idle() })
		r := runWS(t, c, n.url("/"), wsFast)
		for len(n.dialTimes()) == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		r.stop(t)
	})
	t.Run("BackingOff", func(t *testing.T) {
		n := newWSNode(t, c, func(p *wsPeer) { p.refuse(http.StatusBadGateway) })
		tm := wsFast
		tm.minBackoff, tm.maxBackoff = time.Minute, time.Minute
		r := runWS(t, c, n.url("/"), tm)
		r.end(t, "refused", 5*time.Second)
		r.stop(t)
	})
}

// wsNoSecret: the URL's user info travels as Basic authorization, and no
// error or log line names the password, the path or the query of the URL,
// whether the node refuses, drops or is not there at all.
func wsNoSecret(t *testing.T, c WSChain) {
	const secret = "s3cret-Key"
	n := newWSNode(t, c, func(p *wsPeer) {
		switch p.k {
		case 1:
			p.refuse(http.StatusInternalServerError)
		case 2:
			if p.subscribe(0) {
				p.drop()
			}
		default:
			p.serve(1)
		}
	})
	url := "ws://user:" + secret + "@" + strings.TrimPrefix(n.srv.URL, "http://") + "/v3/" + secret + "?api-key=" + secret
	r := runWS(t, c, url, wsFast)
	var errs []string
	for k := 1; k <= 2; k++ {
		errs = append(errs, r.end(t, "connection", 5*time.Second).Error())
	}
	r.event(t, "connection 3")
	r.stop(t)
	// Nothing listens here any more.
	gone := "ws://user:" + secret + "@" + strings.TrimPrefix(n.srv.URL, "http://") + "/v3/" + secret
	n.srv.Close()
	f := c.Feed(gone)
	f.Log = slog.New(slog.NewTextHandler(r.logs, nil))
	if err := f.Watch(context.Background(), func(string) {}); err == nil {
		t.Error("Watch on a closed port returned nil")
	} else {
		errs = append(errs, err.Error())
	}
	for _, e := range append(errs, r.logText(t)) {
		if strings.Contains(e, secret) {
			t.Errorf("the URL's secret is out: %s", e)
		}
	}
	want := "Basic " + basicAuth("user", secret)
	for i, a := range n.authorizations() {
		if a != want {
			t.Errorf("connection %d: Authorization %q, want the URL's user info as Basic", i+1, a)
		}
	}
}

func basicAuth(user, pass string) string {
	r := http.Request{Header: http.Header{}}
	r.SetBasicAuth(user, pass)
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
}

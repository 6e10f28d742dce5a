package bitcoin_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/bitcoin"
	"github.com/paywatch/paywatch/devnet"
	"github.com/paywatch/paywatch/payment"
)

// corePublisher publishes on a loopback port the way Bitcoin Core's
// -zmqpub* does (src/zmq/zmqpublishnotifier.cc): three frames, the topic,
// the body and the topic's message count as 4 bytes little-endian.
type corePublisher struct {
	t    *testing.T
	addr string
	pub  zmq4.Socket
	seq  map[string]uint32
}

func startPublisher(t *testing.T, port int) *corePublisher {
	t.Helper()
	p := &corePublisher{t: t, addr: fmt.Sprintf("tcp://127.0.0.1:%d", port), seq: map[string]uint32{}}
	p.pub = zmq4.NewPub(context.Background(), zmq4.WithLogger(log.New(io.Discard, "", 0)))
	if err := p.pub.Listen(p.addr); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *corePublisher) send(topic string, body []byte) {
	p.t.Helper()
	seq := make([]byte, 4)
	binary.LittleEndian.PutUint32(seq, p.seq[topic])
	p.seq[topic]++
	if err := p.pub.SendMulti(zmq4.NewMsgFrom([]byte(topic), body, seq)); err != nil {
		p.t.Fatal(err)
	}
}

func (p *corePublisher) close() { _ = p.pub.Close() }

// TestNotifyZMQWakesOnCoreNotificationsAndResubscribes: with ZMQURL, Notify
// wakes on Core's hashblock and rawtx messages (the node's RPC is not
// used); when the publisher goes away the subscription is lost,
// KeepNotified keeps retrying, and once the publisher is back on the same
// port the notifications wake again.
func TestNotifyZMQWakesOnCoreNotificationsAndResubscribes(t *testing.T) {
	port, err := devnet.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	pub := startPublisher(t, port)
	defer func() { pub.close() }()
	// Nothing listens at the RPC URL: a wake can only come from ZMQ.
	c, err := bitcoin.New(bitcoin.Config{Network: payment.Bitcoin, Chain: bitcoin.Regtest, URL: "http://u:p@127.0.0.1:1",
		ZMQURL: pub.addr})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	notes := make(chan struct{}, 1000)
	var subscriptions atomic.Int64
	attempts := make(chan struct{}, 1000) // one per Notify call
	n := notifierFunc(func(ctx context.Context, wake func()) error {
		subscriptions.Add(1)
		attempts <- struct{}{}
		return c.Notify(ctx, func() { notes <- struct{}{}; wake() })
	})
	done := make(chan error, 1)
	go func() {
		done <- chains.KeepNotified(ctx, n, func() {}, chains.NotifyConfig{MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}, nil)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	hash := make([]byte, 32)
	// woken publishes until a notification arrives (messages sent before
	// the subscription reaches the publisher are dropped, as in ZeroMQ).
	woken := func(topic string, body []byte) {
		t.Helper()
		for len(notes) > 0 {
			<-notes
		}
		for tries := 0; ; tries++ {
			if tries == 300 {
				t.Fatalf("no wake after 300 %s messages", topic)
			}
			pub.send(topic, body)
			select {
			case <-notes:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	woken("hashblock", hash)
	// Subscribed now: each further message wakes at once.
	for _, m := range []struct {
		topic string
		body  []byte
	}{{"rawtx", []byte{0x02, 0x00, 0x00, 0x00, 0x01}}, {"hashtx", hash}, {"hashblock", hash}} {
		pub.send(m.topic, m.body)
		select {
		case <-notes:
		case <-time.After(10 * time.Second):
			t.Fatalf("a %s message on a live subscription did not wake", m.topic)
		}
	}

	before := subscriptions.Load()
	pub.close()
	timeout := time.After(30 * time.Second)
	for subscriptions.Load() < before+2 { // lost, and at least one refused retry
		select {
		case <-attempts:
		case <-timeout:
			t.Fatalf("no resubscription attempt after the publisher closed (%d subscriptions)", subscriptions.Load())
		}
	}
	pub = startPublisher(t, port)
	woken("rawtx", []byte{0x02})
}

// TestNotifyZMQRefusesMalformedMessages: a message that is not Core's
// three frames ends the subscription with ErrInvalidResponse (KeepNotified
// then retries) instead of being taken for a notification.
func TestNotifyZMQRefusesMalformedMessages(t *testing.T) {
	for _, tc := range []struct {
		name   string
		frames [][]byte
	}{
		{"two frames", [][]byte{[]byte("hashblock"), make([]byte, 32)}},
		{"short sequence", [][]byte{[]byte("hashblock"), make([]byte, 32), {0, 0}}},
		{"short hash", [][]byte{[]byte("hashtx"), make([]byte, 31), {0, 0, 0, 0}}},
		{"empty rawtx", [][]byte{[]byte("rawtx"), {}, {0, 0, 0, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port, err := devnet.FreePort()
			if err != nil {
				t.Fatal(err)
			}
			pub := startPublisher(t, port)
			defer pub.close()
			c, err := bitcoin.New(bitcoin.Config{Network: payment.Bitcoin, Chain: bitcoin.Regtest, URL: "http://u:p@127.0.0.1:1",
				ZMQURL: pub.addr})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done := make(chan error, 1)
			wakes := atomic.Int64{}
			go func() { done <- c.Notify(ctx, func() { wakes.Add(1) }) }()
			for {
				// Resent until the subscription is up and the message is read.
				if err := pub.pub.SendMulti(zmq4.NewMsgFrom(tc.frames...)); err != nil {
					t.Fatal(err)
				}
				select {
				case err := <-done:
					if !errors.Is(err, chains.ErrInvalidResponse) {
						t.Fatalf("Notify = %v, want ErrInvalidResponse", err)
					}
					if wakes.Load() != 0 {
						t.Fatalf("%d wakes from malformed messages", wakes.Load())
					}
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		})
	}
}

// notifierFunc adapts a function to chains.Notifier.
type notifierFunc func(ctx context.Context, wake func()) error

func (f notifierFunc) Notify(ctx context.Context, wake func()) error { return f(ctx, wake) }

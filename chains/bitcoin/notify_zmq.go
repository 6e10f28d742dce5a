package bitcoin

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/paywatch/paywatch/chains"
)

// zmqTopics are the Bitcoin Core / Litecoin Core ZMQ notifications that
// wake the scanner: a new best block, or a transaction entering the mempool
// (or a block). A topic the node does not publish on the endpoint is simply
// never received.
var zmqTopics = []string{"hashblock", "hashtx", "rawblock", "rawtx"}

// zmqDialTimeout bounds connecting to the publisher.
const zmqDialTimeout = 10 * time.Second

// notifyZMQ subscribes to the node's ZMQ publisher at Config.ZMQURL and
// wakes on every notification until ctx ends (nil) or the connection is
// lost (an error, which KeepNotified retries while polling goes on). Core
// sends each notification as three frames: the topic, the body (a 32-byte
// hash, or the raw block or transaction) and a 4-byte little-endian
// sequence number per topic. A gap in the sequence (the publisher dropped
// messages past its high-water mark) needs nothing: any message wakes, and
// the scanner reads from its cursor.
func (c *Client) notifyZMQ(ctx context.Context, wake func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// No retries inside the socket: a refused dial is a lost subscription
	// for KeepNotified to retry with backoff. The socket's own log would
	// name the endpoint: it is discarded, errors are returned instead.
	sub := zmq4.NewSub(ctx, zmq4.WithDialerMaxRetries(0), zmq4.WithDialerTimeout(zmqDialTimeout),
		zmq4.WithLogger(log.New(io.Discard, "", 0)))
	defer sub.Close()
	if err := sub.Dial(c.zmqURL); err != nil {
		return fmt.Errorf("%s: zmq: %w", c.network, err)
	}
	for _, t := range zmqTopics {
		if err := sub.SetOption(zmq4.OptionSubscribe, t); err != nil {
			return fmt.Errorf("%s: zmq subscribe %s: %w", c.network, t, err)
		}
	}
	for {
		msg, err := sub.Recv()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: zmq: %w", c.network, err)
		}
		if err := checkZMQ(msg.Frames); err != nil {
			return fmt.Errorf("%s: zmq: %w: %v", c.network, chains.ErrInvalidResponse, err)
		}
		wake()
	}
}

// checkZMQ checks that frames are one Core notification of a subscribed
// topic.
func checkZMQ(frames [][]byte) error {
	if len(frames) != 3 {
		return fmt.Errorf("%d frames, want topic, body and sequence", len(frames))
	}
	topic, body, seq := string(frames[0]), frames[1], frames[2]
	if len(seq) != 4 {
		return fmt.Errorf("%s: sequence of %d bytes, want 4", topic, len(seq))
	}
	switch topic {
	case "hashblock", "hashtx":
		if len(body) != 32 {
			return fmt.Errorf("%s #%d: %d-byte hash", topic, binary.LittleEndian.Uint32(seq), len(body))
		}
	case "rawblock", "rawtx":
		if len(body) == 0 {
			return fmt.Errorf("%s #%d: empty body", topic, binary.LittleEndian.Uint32(seq))
		}
	default:
		return fmt.Errorf("topic %q was not subscribed to", topic)
	}
	return nil
}

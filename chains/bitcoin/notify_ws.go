package bitcoin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/websocket"

	"github.com/paywatch/paywatch/chains"
)

// Keep-alive of the btcd websocket: a ping every wsPingEvery, and a
// connection that has said nothing (not even a pong) for wsQuietFor is
// taken as lost, so a half-open TCP connection cannot hide a dead node.
const (
	wsPingEvery = 30 * time.Second
	wsQuietFor  = 75 * time.Second
	wsMaxFrame  = 1 << 20
)

// wsURL is btcd's websocket endpoint: the RPC URL's host at path /ws, with
// ws for http and wss for https.
func (c *rpcClient) wsURL() (string, error) {
	u, err := url.Parse(c.endpoint)
	if err != nil {
		return "", errors.New("URL: not a valid URL")
	}
	u.Scheme = map[string]string{"http": "ws", "https": "wss"}[u.Scheme]
	u.Path, u.RawQuery, u.Fragment = "/ws", "", ""
	return u.String(), nil
}

// wsMessage is a btcd websocket frame: an answer to one of our requests
// (ID set) or a notification (Method set, ID null).
type wsMessage struct {
	ID     *uint64         `json:"id"`
	Method string          `json:"method"`
	Error  *RPCError       `json:"error"`
	Result json.RawMessage `json:"result"`
}

// notifyWebsocket subscribes to btcd's notifyblocks and
// notifynewtransactions on its websocket and calls note with the method of
// every notification (blockconnected, blockdisconnected, txaccepted, ...). A
// node without the websocket endpoint is chains.ErrNotifyUnsupported; a
// failed dial or a closed connection is a lost subscription.
func (c *Client) notifyWebsocket(ctx context.Context, note func(method string)) error {
	endpoint, err := c.rpc.wsURL()
	if err != nil {
		return fmt.Errorf("%s: notifications: %w", c.network, err)
	}
	user, pass, err := c.rpc.credentials()
	if err != nil {
		return fmt.Errorf("%s: notifications: %w", c.network, err)
	}
	hdr := http.Header{}
	req := http.Request{Header: hdr}
	req.SetBasicAuth(user, pass)
	dialer := websocket.Dialer{HandshakeTimeout: 30 * time.Second, Proxy: http.ProxyFromEnvironment}
	conn, resp, err := dialer.DialContext(ctx, endpoint, hdr)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return fmt.Errorf("%s: %w: no websocket endpoint", c.network, chains.ErrNotifyUnsupported)
		}
		if resp != nil {
			return fmt.Errorf("%s: websocket: HTTP %d", c.network, resp.StatusCode)
		}
		// The dial error names the host but never the credentials, which
		// travel in the header only.
		return fmt.Errorf("%s: websocket: %w", c.network, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	conn.SetReadLimit(wsMaxFrame)
	quiet := func() error { return conn.SetReadDeadline(time.Now().Add(wsQuietFor)) }
	if err := quiet(); err != nil {
		return fmt.Errorf("%s: websocket: %w", c.network, err)
	}
	conn.SetPongHandler(func(string) error { return quiet() })

	subscriptions := []struct {
		method string
		params []any
	}{{"notifyblocks", []any{}}, {"notifynewtransactions", []any{false}}}
	pending := map[uint64]string{}
	for i, s := range subscriptions {
		id := uint64(i + 1)
		pending[id] = s.method
		msg := map[string]any{"jsonrpc": "1.0", "id": id, "method": s.method, "params": s.params}
		if err := conn.WriteJSON(msg); err != nil {
			return fmt.Errorf("%s: websocket: %s: %w", c.network, s.method, err)
		}
	}

	pingDone := make(chan struct{})
	defer close(pingDone)
	go func() {
		t := time.NewTicker(wsPingEvery)
		defer t.Stop()
		for {
			select {
			case <-pingDone:
				return
			case <-t.C:
				// WriteControl may run beside the reader; a failed
				// ping shows as a read error soon after.
				_ = conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(10*time.Second))
			}
		}
	}()

	for {
		var m wsMessage
		err := conn.ReadJSON(&m)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: websocket subscription lost: %w", c.network, err)
		}
		if err := quiet(); err != nil {
			return fmt.Errorf("%s: websocket: %w", c.network, err)
		}
		if m.ID != nil {
			method, ok := pending[*m.ID]
			if !ok {
				continue
			}
			delete(pending, *m.ID)
			if m.Error != nil {
				return fmt.Errorf("%s: websocket: %s: %w", c.network, method, m.Error)
			}
			continue
		}
		if m.Method != "" {
			note(m.Method)
		}
	}
}

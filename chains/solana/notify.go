package solana

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/websocket"

	"github.com/paywatch/paywatch/chains"
)

var _ chains.Notifier = (*Client)(nil)

// Keep-alive of the pubsub websocket: a ping every wsPingEvery; a
// connection silent (no slot, no pong) for wsQuietFor is taken as lost.
const (
	wsPingEvery = 30 * time.Second
	wsQuietFor  = 75 * time.Second
	wsMaxFrame  = 1 << 20
)

// notifyURL is the pubsub websocket Notify dials: Config.NotifyURL, else
// the RPC URL with ws for http and wss for https (a provider's layout; a
// bare agave node serves pubsub on the RPC port + 1, which NotifyURL names).
func notifyURL(cfg Config) string {
	if cfg.NotifyURL != "" {
		return cfg.NotifyURL
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return ""
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return ""
	}
	return u.String()
}

// wsMessage is one pubsub frame: an answer (ID set) or a notification.
type wsMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
	Params struct {
		Result struct {
			Root uint64 `json:"root"`
		} `json:"result"`
		Subscription uint64 `json:"subscription"`
	} `json:"params"`
}

// Notify subscribes to slotSubscribe on the pubsub websocket and wakes when
// a notification's root advances: the scanner reads finalized slots, so a
// slot that is only processed has nothing for it yet. A node or provider
// without pubsub (an HTTP client error on the upgrade, "Method not found")
// is chains.ErrNotifyUnsupported; a failed dial, a server error or a closed
// connection is a lost subscription.
func (c *Client) Notify(ctx context.Context, wake func()) error {
	if c.notifyURL == "" {
		return fmt.Errorf("solana: %w: no websocket URL", chains.ErrNotifyUnsupported)
	}
	dialer := websocket.Dialer{HandshakeTimeout: 30 * time.Second, Proxy: http.ProxyFromEnvironment}
	conn, resp, err := dialer.DialContext(ctx, c.notifyURL, nil)
	if err != nil {
		if resp != nil {
			if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
				return fmt.Errorf("solana: %w: websocket upgrade answered HTTP %d", chains.ErrNotifyUnsupported, resp.StatusCode)
			}
			return fmt.Errorf("solana: websocket upgrade answered HTTP %d", resp.StatusCode)
		}
		return fmt.Errorf("solana: dial websocket: %w", chains.RedactError(err))
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	conn.SetReadLimit(wsMaxFrame)
	quiet := func() error { return conn.SetReadDeadline(time.Now().Add(wsQuietFor)) }
	if err := quiet(); err != nil {
		return fmt.Errorf("solana: websocket: %w", err)
	}
	conn.SetPongHandler(func(string) error { return quiet() })
	if err := conn.WriteJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "slotSubscribe"}); err != nil {
		return fmt.Errorf("solana: slotSubscribe: %w", err)
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
				_ = conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(10*time.Second))
			}
		}
	}()

	var sub uint64
	subscribed := false
	var root uint64
	for {
		var m wsMessage
		err := conn.ReadJSON(&m)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("solana: slot subscription lost: %w", err)
		}
		if err := quiet(); err != nil {
			return fmt.Errorf("solana: websocket: %w", err)
		}
		switch {
		case !subscribed && string(m.ID) == "1":
			if m.Error != nil {
				if m.Error.Code == -32601 {
					return fmt.Errorf("solana: %w: slotSubscribe: %s", chains.ErrNotifyUnsupported, m.Error.Message)
				}
				return fmt.Errorf("solana: slotSubscribe: %d %s", m.Error.Code, m.Error.Message)
			}
			if err := json.Unmarshal(m.Result, &sub); err != nil {
				return fmt.Errorf("solana: slotSubscribe answered %.40q, want a subscription id", m.Result)
			}
			subscribed = true
		case subscribed && m.Method == "slotNotification" && m.Params.Subscription == sub:
			if r := m.Params.Result.Root; r > root {
				root = r
				wake()
			}
		}
	}
}

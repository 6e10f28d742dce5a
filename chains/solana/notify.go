package solana

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/payment"
)

// Notify subscribes to slotSubscribe on the pubsub websocket and wakes when
// a notification's root advances (wsFeed). A node or provider without pubsub
// (an HTTP client error on the upgrade, "Method not found") is
// chains.ErrNotifyUnsupported; a failed dial, a server error or a closed
// connection is a lost subscription.
func (c *Client) Notify(ctx context.Context, wake func()) error {
	return wsFeed(c.notifyURL, c.log.With("network", string(payment.Solana))).Notify(ctx, wake)
}

// wsFeed is slotSubscribe on url. It wakes on a slotNotification whose root
// is above the last one's on this connection: the scanner reads finalized
// slots, so a slot that is only processed has nothing for it yet. Any 4xx
// but 429 answering the upgrade means there is no pubsub here.
func wsFeed(url string, log *slog.Logger) chains.WSFeed {
	var root uint64
	return chains.WSFeed{
		Name: "solana",
		URL:  url,
		Unsupported: func(status int) bool {
			return status >= 400 && status < 500 && status != http.StatusTooManyRequests
		},
		Subscribe: []chains.WSSubscribe{{Method: "slotSubscribe"}},
		Parse: func(n chains.WSNotification) string {
			if n.Method != "slotNotification" || n.Sub != 0 {
				return ""
			}
			var slot struct {
				Root uint64 `json:"root"`
			}
			if json.Unmarshal(n.Result, &slot) != nil || slot.Root <= root {
				return ""
			}
			root = slot.Root
			return "slotNotification"
		},
		Log: log,
	}
}

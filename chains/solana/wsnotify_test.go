package solana

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
)

// TestNotifyWebsocketSuite runs the websocket notify suite on slotSubscribe
// against a misbehaving node: drops, trickled frames, garbage, silence,
// refusals, cancellation. A slot wakes only when its root advances.
func TestNotifyWebsocketSuite(t *testing.T) {
	const sub = 23
	slot := func(id, root int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"parent":%d,"root":%d,"slot":%d},"subscription":%d}}`, root+31, root, root+32, id)
	}
	chainstest.RunWS(t, chainstest.WSChain{
		Feed: func(url string) chains.WSFeed { return wsFeed(url, nil) },
		Answer: func(method string, params json.RawMessage) any {
			if method != "slotSubscribe" || params != nil {
				t.Errorf("subscribe request %s %s", method, params)
			}
			return sub
		},
		Note: func(k int) (string, int) { return slot(sub, 1000+k), 0 },
		Strays: []string{
			slot(sub, 1001),   // the root of Note(1) again: no progress
			slot(sub, 999),    // a root going back
			slot(sub+1, 5000), // another subscription
			`{"jsonrpc":"2.0","method":"slotNotification","params":{"result":"x","subscription":23}}`,
			`{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"root":"5000"},"subscription":23}}`,
			`{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"root":-1},"subscription":23}}`,
			`{"jsonrpc":"2.0","method":"slotNotification","params":{"result":null,"subscription":23}}`,
			`{"jsonrpc":"2.0","method":"rootNotification","params":{"result":{"root":5000},"subscription":23}}`,
			`{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"root":5000},"subscription":"23"}}`,
		},
	})
}

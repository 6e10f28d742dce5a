package bitcoin

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
)

// TestNotifyWebsocketSuite runs the websocket notify suite on btcd's feed
// (notifyblocks, notifynewtransactions) against a misbehaving node: drops,
// trickled frames, garbage, silence, refusals, cancellation.
func TestNotifyWebsocketSuite(t *testing.T) {
	chainstest.RunWS(t, chainstest.WSChain{
		Feed:   func(url string) chains.WSFeed { return btcdFeed("bitcoin", url, nil, nil) },
		Answer: func(string, json.RawMessage) any { return nil }, // btcd answers null
		Note: func(k int) (string, int) {
			if k%2 == 0 {
				return fmt.Sprintf(`{"jsonrpc":"1.0","method":"txaccepted","params":["%064x",0.0001],"id":null}`, k), -1
			}
			return fmt.Sprintf(`{"jsonrpc":"1.0","method":"blockconnected","params":["%064x",%d,1700000000],"id":null}`, k, k), -1
		},
		Strays: []string{
			`{"jsonrpc":"1.0","method":"","params":["x"],"id":null}`,
			`{"jsonrpc":"1.0","result":null,"error":null,"id":3}`,
			`{"jsonrpc":"1.0","result":null,"error":{"code":-1,"message":"late"},"id":1}`,
		},
	})
}

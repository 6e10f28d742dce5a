package evm

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/paywatch/paywatch/chains"
	"github.com/paywatch/paywatch/chains/chainstest"
)

// TestNotifyWebsocketSuite runs the websocket notify suite on eth_subscribe
// (newHeads, and newPendingTransactions which a node may refuse) against a
// misbehaving node: drops, trickled frames, garbage, silence, refusals,
// cancellation.
func TestNotifyWebsocketSuite(t *testing.T) {
	ids := map[string]string{"newHeads": "0x9cef478923ff08bf67fde6c64013158d", "newPendingTransactions": "0xc3b33aa549fb9a60e95d21862596617c"}
	head := func(id string, k int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":%q,"result":{"number":"0x%x","hash":"0x%064x","parentHash":"0x%064x"}}}`, id, k, k, k-1)
	}
	chainstest.RunWS(t, chainstest.WSChain{
		Feed: func(url string) chains.WSFeed { return wsFeed(url, nil) },
		Answer: func(method string, params json.RawMessage) any {
			var kind []string
			if method != "eth_subscribe" || json.Unmarshal(params, &kind) != nil || len(kind) == 0 {
				t.Errorf("subscribe request %s %s", method, params)
				return nil
			}
			return ids[kind[0]]
		},
		Note: func(k int) (string, int) {
			if k%2 == 0 {
				return fmt.Sprintf(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":%q,"result":"0x%064x"}}`, ids["newPendingTransactions"], k), 1
			}
			return head(ids["newHeads"], k), 0
		},
		Strays: []string{
			head("0x0000000000000000000000000000dead", 7),
			`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"` + ids["newHeads"] + `","result":"0x1"}}`,
			`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"` + ids["newHeads"] + `","result":null}}`,
			`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"` + ids["newHeads"] + `"}}`,
			`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"` + ids["newPendingTransactions"] + `","result":5}}`,
			`{"jsonrpc":"2.0","method":"eth_other","params":{"subscription":"` + ids["newHeads"] + `","result":{}}}`,
			`{"jsonrpc":"2.0","method":"eth_subscription","params":["` + ids["newHeads"] + `",{}]}`,
		},
	})
}

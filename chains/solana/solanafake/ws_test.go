package solanafake

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestSlotSubscribeWireFormat: agave's pubsub frames byte for byte: the
// subscription id as the answer, slotNotification per produced slot
// (not per skipped one), slotUnsubscribe, and -32601 for other methods.
func TestSlotSubscribeWireFormat(t *testing.T) {
	n := New()
	srv := httptest.NewServer(n)
	t.Cleanup(srv.Close)
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	roundTrip := func(req, want string) {
		t.Helper()
		if err := conn.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
			t.Fatal(err)
		}
		expect(t, conn, want)
	}
	roundTrip(`{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}`, `{"id":1,"jsonrpc":"2.0","result":0}`)
	if got := n.Subscriptions(); got != 1 {
		t.Fatalf("%d subscriptions, want 1", got)
	}
	n.Mine(1)
	expect(t, conn, `{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"parent":0,"root":1,"slot":1},"subscription":0}}`)
	n.Skip(2)
	n.Mine(1)
	expect(t, conn, `{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"parent":1,"root":4,"slot":4},"subscription":0}}`)
	roundTrip(`{"jsonrpc":"2.0","id":2,"method":"accountSubscribe","params":["x"]}`, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":2}`)
	roundTrip(`{"jsonrpc":"2.0","id":3,"method":"slotUnsubscribe","params":[7]}`, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid subscription id."},"id":3}`)
	roundTrip(`{"jsonrpc":"2.0","id":4,"method":"slotUnsubscribe","params":[0]}`, `{"id":4,"jsonrpc":"2.0","result":true}`)
	if got := n.Subscriptions(); got != 0 {
		t.Fatalf("%d subscriptions after unsubscribing, want 0", got)
	}
	n.DropSubscriptions()
	if _, _, err := conn.ReadMessage(); err == nil {
		t.Fatal("the connection is still open after DropSubscriptions")
	}
}

func expect(t *testing.T, conn *websocket.Conn, want string) {
	t.Helper()
	_, got, err := conn.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(got)) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

package solanafake

import (
	"encoding/json"
	"net/http"

	"github.com/gorilla/websocket"
)

// slotInfo is agave's SlotInfo, the result of a slotNotification.
type slotInfo struct {
	Parent uint64 `json:"parent"`
	Root   uint64 `json:"root"`
	Slot   uint64 `json:"slot"`
}

// wsConn is one websocket client of the pubsub service.
type wsConn struct {
	conn  *websocket.Conn
	out   chan any        // answers and notifications, written in order
	slots map[uint64]bool // slotSubscribe subscription ids, under Node.mu
}

// write queues an answer (the reader waits for room).
func (c *wsConn) write(v any) { c.out <- v }

// outbox queues a notification without waiting: a client that does not
// read loses notifications, it never stalls the node.
func (c *wsConn) outbox(v any) {
	select {
	case c.out <- v:
	default:
	}
}

// writer sends the queue until it is closed or a write fails.
func (c *wsConn) writer(done chan<- struct{}) {
	defer close(done)
	for v := range c.out {
		if err := c.conn.WriteJSON(v); err != nil {
			c.conn.Close()
			for range c.out { // drain until the reader closes it
			}
			return
		}
	}
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// serveWS is agave's pubsub service (rpc/src/rpc_pubsub.rs): JSON-RPC 2.0
// over a websocket. slotSubscribe (no parameters) answers the new
// subscription id; every produced slot is then sent as
// {"jsonrpc":"2.0","method":"slotNotification","params":{"result":
// {"parent":P,"root":R,"slot":S},"subscription":ID}}. slotUnsubscribe [ID]
// answers true (-32602 "Invalid subscription id." for an unknown one); any
// other method is -32601 "Method not found".
func (n *Node) serveWS(w http.ResponseWriter, r *http.Request) {
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &wsConn{conn: conn, out: make(chan any, 256), slots: map[uint64]bool{}}
	written := make(chan struct{})
	go c.writer(written)
	n.mu.Lock()
	if n.ws == nil {
		n.ws = map[*wsConn]bool{}
	}
	n.ws[c] = true
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		delete(n.ws, c)
		n.mu.Unlock()
		close(c.out) // no notifySlot can send any more: it runs under n.mu
		conn.Close()
		<-written
	}()
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			return
		}
		var req struct {
			JSONRPC string            `json:"jsonrpc"`
			ID      json.RawMessage   `json:"id"`
			Method  string            `json:"method"`
			Params  []json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(msg, &req); err != nil {
			c.write(failure{JSONRPC: "2.0", Error: &rpcError{Code: -32700, Message: "Parse error"}, ID: nullID})
			continue
		}
		if req.JSONRPC != "2.0" || req.Method == "" || req.ID == nil {
			c.write(failure{JSONRPC: "2.0", Error: &rpcError{Code: -32600, Message: "Invalid request"}, ID: nullID})
			continue
		}
		result, rerr := n.wsCall(c, req.Method, req.Params)
		if rerr != nil {
			c.write(failure{JSONRPC: "2.0", Error: rerr, ID: req.ID})
			continue
		}
		c.write(map[string]any{"jsonrpc": "2.0", "result": result, "id": req.ID})
	}
}

func (n *Node) wsCall(c *wsConn, method string, params []json.RawMessage) (any, *rpcError) {
	switch method {
	case "slotSubscribe":
		if len(params) != 0 {
			return nil, &rpcError{Code: -32602, Message: "Invalid parameters: No parameters were expected"}
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		id := n.nextSub
		n.nextSub++
		c.slots[id] = true
		return id, nil
	case "slotUnsubscribe":
		if err := arity(params, 1, 1); err != nil {
			return nil, err
		}
		id, err := parseU64(params[0])
		if err != nil {
			return nil, err
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		if !c.slots[id] {
			return nil, &rpcError{Code: -32602, Message: "Invalid subscription id."}
		}
		delete(c.slots, id)
		return true, nil
	}
	if out, err, ok := n.walletWSCall(c, method, params); ok {
		return out, err
	}
	return nil, &rpcError{Code: -32601, Message: "Method not found"}
}

// notifySlot sends slot (with its parent) to every slotSubscribe
// subscription; every slot is final here, so root is the slot itself.
// Callers hold n.mu; the writes run in each connection's writer.
func (n *Node) notifySlot(parent, slot uint64) {
	info := slotInfo{Parent: parent, Root: slot, Slot: slot}
	for c := range n.ws {
		for id := range c.slots {
			msg := map[string]any{"jsonrpc": "2.0", "method": "slotNotification",
				"params": map[string]any{"result": info, "subscription": id}}
			c.outbox(msg)
		}
	}
}

// DropSubscriptions closes every websocket connection, as a restarting node
// or a dropping proxy does; clients must subscribe again.
func (n *Node) DropSubscriptions() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for c := range n.ws {
		c.conn.Close()
	}
}

// Subscriptions counts the live slotSubscribe subscriptions.
func (n *Node) Subscriptions() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := 0
	for c := range n.ws {
		k += len(c.slots)
	}
	return k
}

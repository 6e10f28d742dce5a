package solanafake

import (
	"encoding/json"
	"sort"
)

// Signed transactions in blocks, and their signatureSubscribe
// notifications (agave rpc_pubsub.rs: signatureSubscribe [signature,
// {commitment, enableReceivedNotification}] answers a subscription id; when
// the transaction is in a block the subscriber gets one
// signatureNotification {"context":{"slot"},"value":{"err"}} and the
// subscription ends).

// priorState is an account's state before a transaction changed it, so a
// reorg can put it back.
type priorState struct {
	data  *accountData // nil: a System account without data
	there bool
}

// includePendingLocked puts a queued payment into block b: a PaySOL
// payment as before, a wallet's transaction by running it now. A wallet
// transaction that fails its checks at this point (its blockhash expired,
// its fee payer can no longer pay) is dropped, as a leader drops it.
func (n *Node) includePendingLocked(b *block, p *pending) {
	if p.signed == nil {
		n.include(b, n.transfer(p, b))
		return
	}
	r := n.processLocked(p.signed)
	if !r.committed {
		return
	}
	prior := map[string]priorState{}
	for k := range r.writes {
		a, there := n.accounts[k]
		var cp *accountData
		if there {
			cp = &accountData{owner: a.owner, data: append([]byte(nil), a.data...)}
		}
		prior[k] = priorState{data: cp, there: there}
	}
	n.commitLocked(r)
	t := r.storedTx(p.signed)
	if n.prior == nil {
		n.prior = map[string]map[string]priorState{}
	}
	n.prior[t.signatures[0]] = prior
	n.include(b, t)
}

// restoreLocked undoes a wallet transaction's account data when a reorg
// drops it (its lamports come back through its preBalances).
func (n *Node) restoreLocked(t *ftx) {
	prior := n.prior[t.signatures[0]]
	for k, p := range prior {
		if p.there {
			n.setAccount(k, p.data.owner, p.data.data)
		} else {
			delete(n.accounts, k)
		}
	}
	delete(n.prior, t.signatures[0])
}

// sigSub is one signatureSubscribe subscription.
type sigSub struct {
	conn *wsConn
	sig  string
}

// walletWSCall answers signatureSubscribe and signatureUnsubscribe; ok is
// false for other methods.
func (n *Node) walletWSCall(c *wsConn, method string, params []json.RawMessage) (any, *rpcError, bool) {
	switch method {
	case "signatureSubscribe":
		if err := arity(params, 1, 2); err != nil {
			return nil, err, true
		}
		sig, perr := verifyBase58(params[0], 64)
		if perr != nil {
			return nil, perr, true
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		id := n.nextSub
		n.nextSub++
		if n.sigSubs == nil {
			n.sigSubs = map[uint64]*sigSub{}
		}
		n.sigSubs[id] = &sigSub{conn: c, sig: sig}
		return id, nil, true
	case "signatureUnsubscribe":
		if err := arity(params, 1, 1); err != nil {
			return nil, err, true
		}
		id, perr := parseU64(params[0])
		if perr != nil {
			return nil, perr, true
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		if s := n.sigSubs[id]; s == nil || s.conn != c {
			return nil, &rpcError{Code: -32602, Message: "Invalid subscription id."}, true
		}
		delete(n.sigSubs, id)
		return true, nil, true
	}
	return nil, nil, false
}

// notifySignaturesLocked sends a signatureNotification for every
// subscribed signature now in a block, and ends those subscriptions
// (subscriptions of closed connections are dropped).
func (n *Node) notifySignaturesLocked() {
	ids := make([]uint64, 0, len(n.sigSubs))
	for id := range n.sigSubs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		s := n.sigSubs[id]
		if !n.ws[s.conn] {
			delete(n.sigSubs, id)
			continue
		}
		t := n.txs[s.sig]
		if t == nil {
			continue
		}
		s.conn.outbox(map[string]any{"jsonrpc": "2.0", "method": "signatureNotification", "params": map[string]any{
			"result": map[string]any{
				"context": map[string]any{"slot": t.slot},
				"value":   map[string]any{"err": t.meta["err"]},
			},
			"subscription": id,
		}})
		delete(n.sigSubs, id)
	}
}

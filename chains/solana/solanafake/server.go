package solanafake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/gorilla/websocket"
	"github.com/mr-tron/base58"
)

// maxRequestBody is agave's default MAX_REQUEST_BODY_SIZE (50 KiB).
const maxRequestBody = 50 << 10

// maxBlocksRange is agave's MAX_GET_CONFIRMED_BLOCKS_RANGE.
const maxBlocksRange = 500_000

// maxSignaturesLimit is agave's MAX_GET_CONFIRMED_SIGNATURES_FOR_ADDRESS2_LIMIT.
const maxSignaturesLimit = 1000

// JSON-RPC 2.0 and agave error codes.
const (
	codeParse                = -32700
	codeInvalidRequest       = -32600
	codeMethodNotFound       = -32601
	codeInvalidParams        = -32602
	codeInternal             = -32603
	codeBlockNotAvailable    = -32004
	codeSlotSkipped          = -32007
	codeLongTermSkipped      = -32009
	codeStatusNotAvailable   = -32014
	codeUnsupportedVersion   = -32015
	codeLongTermUnreachable  = -32019
	untaggedEncodingConfig   = "data did not match any variant of untagged enum RpcEncodingConfigWrapper"
	commitmentBelowConfirmed = "Method does not support commitment below `confirmed`"
)

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

// invalidParams is jsonrpc-core's rendering of a parameter parse failure.
func invalidParams(msg string) *rpcError {
	return &rpcError{Code: codeInvalidParams, Message: "Invalid params: " + msg + "."}
}

// Responses keep jsonrpc-core's member order: jsonrpc, result|error, id.
type success struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result"`
	ID      json.RawMessage `json:"id"`
}

type failure struct {
	JSONRPC string          `json:"jsonrpc"`
	Error   *rpcError       `json:"error"`
	ID      json.RawMessage `json:"id"`
}

var nullID = json.RawMessage("null")

// ServeHTTP answers JSON-RPC 2.0 POST requests, single or batched, like
// agave's HTTP RPC service.
func (n *Node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if websocket.IsWebSocketUpgrade(r) {
		n.serveWS(w, r)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "Used HTTP Method is not allowed. POST or OPTIONS is required", http.StatusMethodNotAllowed)
		return
	}
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		http.Error(w, "Supplied content type is not allowed. Content-Type: application/json is required", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
	if err != nil {
		return
	}
	if len(body) > maxRequestBody {
		http.Error(w, "Payload Too Large", http.StatusRequestEntityTooLarge)
		return
	}
	n.mu.Lock()
	fail := 0
	if len(n.fails) > 0 {
		fail, n.fails = n.fails[0], n.fails[1:]
	}
	n.mu.Unlock()
	switch fail {
	case 0:
	case FailHTTP429:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":429,"message":"Too many requests for a specific RPC call"},"id":1}`)
		return
	case FailHTTP500:
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	case FailGarbage:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "<html>502 Bad Gateway</html>")
		return
	case FailHang:
		<-r.Context().Done()
		return
	default:
		n.writeJSON(w, n.injected(fail, body))
		return
	}
	n.writeJSON(w, n.handleBody(body))
}

func (n *Node) writeJSON(w http.ResponseWriter, out []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if out == nil { // only notifications
		return
	}
	_, _ = w.Write(out)
}

// injected renders a FailNext JSON-RPC error with agave's message for the
// slot the request names (0 if none).
func (n *Node) injected(code int, body []byte) []byte {
	var req struct {
		Params []json.RawMessage `json:"params"`
		ID     json.RawMessage   `json:"id"`
	}
	_ = json.Unmarshal(body, &req)
	var slot uint64
	if len(req.Params) > 0 {
		_ = json.Unmarshal(req.Params[0], &slot)
	}
	id := req.ID
	if id == nil {
		id = nullID
	}
	var msg string
	switch code {
	case codeBlockNotAvailable:
		msg = fmt.Sprintf("Block not available for slot %d", slot)
	case codeSlotSkipped:
		msg = fmt.Sprintf("Slot %d was skipped, or missing due to ledger jump to recent snapshot", slot)
	case codeLongTermSkipped:
		msg = fmt.Sprintf("Slot %d was skipped, or missing in long-term storage", slot)
	case codeStatusNotAvailable:
		msg = fmt.Sprintf("Block status not yet available for slot %d", slot)
	case codeLongTermUnreachable:
		msg = "Failed to query long-term storage; please try again"
	default:
		msg = "Internal error"
	}
	out, _ := json.Marshal(failure{JSONRPC: "2.0", Error: &rpcError{Code: code, Message: msg}, ID: id})
	return out
}

// handleBody answers a single call or a batch.
func (n *Node) handleBody(body []byte) []byte {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var calls []json.RawMessage
		if err := json.Unmarshal(trimmed, &calls); err != nil {
			return mustJSON(failure{JSONRPC: "2.0", Error: &rpcError{Code: codeParse, Message: "Parse error"}, ID: nullID})
		}
		if len(calls) == 0 {
			return mustJSON(failure{JSONRPC: "2.0", Error: &rpcError{Code: codeInvalidRequest, Message: "Invalid request"}, ID: nullID})
		}
		var outs []json.RawMessage
		for _, c := range calls {
			if out := n.handleCall(c); out != nil {
				outs = append(outs, out)
			}
		}
		if len(outs) == 0 {
			return nil
		}
		return mustJSON(outs)
	}
	if !json.Valid(trimmed) {
		return mustJSON(failure{JSONRPC: "2.0", Error: &rpcError{Code: codeParse, Message: "Parse error"}, ID: nullID})
	}
	return n.handleCall(trimmed)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // responses are built from marshalable values only
	}
	return b
}

// handleCall answers one call object; nil for a notification (no id).
func (n *Node) handleCall(raw json.RawMessage) []byte {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return mustJSON(failure{JSONRPC: "2.0", Error: &rpcError{Code: codeInvalidRequest, Message: "Invalid request"}, ID: nullID})
	}
	id, hasID := members["id"]
	if !hasID {
		id = nullID
	}
	invalidReq := mustJSON(failure{JSONRPC: "2.0", Error: &rpcError{Code: codeInvalidRequest, Message: "Invalid request"}, ID: id})
	for k := range members {
		switch k {
		case "jsonrpc", "method", "params", "id":
		default:
			return invalidReq // jsonrpc-core denies unknown fields
		}
	}
	var version, method string
	if json.Unmarshal(members["jsonrpc"], &version) != nil || version != "2.0" {
		return invalidReq
	}
	if json.Unmarshal(members["method"], &method) != nil {
		return invalidReq
	}
	var params []json.RawMessage
	if p, ok := members["params"]; ok && string(p) != "null" {
		if len(p) > 0 && p[0] == '{' {
			if !hasID {
				return nil
			}
			return mustJSON(failure{JSONRPC: "2.0", Error: invalidParams("invalid type: map, expected a tuple"), ID: id})
		}
		if err := json.Unmarshal(p, &params); err != nil {
			return invalidReq
		}
	}
	result, rerr := n.dispatch(method, params)
	if !hasID {
		return nil
	}
	if rerr != nil {
		return mustJSON(failure{JSONRPC: "2.0", Error: rerr, ID: id})
	}
	return mustJSON(success{JSONRPC: "2.0", Result: mustJSON(result), ID: id})
}

// dispatch runs one method under the node lock.
func (n *Node) dispatch(method string, params []json.RawMessage) (any, *rpcError) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch method {
	case "getSlot":
		return n.getSlot(params)
	case "getBlockHeight":
		if err := n.contextConfig(params, 1, 0, false); err != nil {
			return nil, err
		}
		return n.last.height, nil
	case "getBlock":
		return n.getBlock(params)
	case "getBlocks":
		return n.getBlocks(params)
	case "getBlocksWithLimit":
		return n.getBlocksWithLimit(params)
	case "getTransaction":
		return n.getTransaction(params)
	case "getSignaturesForAddress":
		return n.getSignaturesForAddress(params)
	case "getBalance":
		return n.getBalance(params)
	case "getHealth":
		return "ok", nil
	case "getGenesisHash":
		return n.genesis, nil
	case "getVersion":
		return map[string]any{"feature-set": 0, "solana-core": "2.2.0-solanafake"}, nil
	}
	if out, err, ok := n.walletDispatch(method, params); ok {
		return out, err
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "Method not found"}
}

// describe names a JSON value the way serde's "invalid type" errors do.
func describe(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "null":
		return "null"
	case s == "true" || s == "false":
		return "boolean `" + s + "`"
	case strings.HasPrefix(s, `"`):
		return "string " + s
	case strings.HasPrefix(s, "["):
		return "sequence"
	case strings.HasPrefix(s, "{"):
		return "map"
	case strings.HasPrefix(s, "-"):
		return "integer `" + s + "`"
	}
	return "integer `" + s + "`"
}

func arity(params []json.RawMessage, min, max int) *rpcError {
	if len(params) < min {
		return invalidParams(fmt.Sprintf("invalid length %d, expected at least %d elements", len(params), min))
	}
	if len(params) > max {
		return invalidParams(fmt.Sprintf("invalid length %d, expected fewer elements in array", len(params)))
	}
	return nil
}

func parseU64(raw json.RawMessage) (uint64, *rpcError) {
	var v uint64
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, invalidParams(fmt.Sprintf("invalid type: %s, expected u64", describe(raw)))
	}
	return v, nil
}

// commitment validates a commitment level; atLeastConfirmed applies agave's
// check_is_at_least_confirmed.
func commitment(c *string, atLeastConfirmed bool) *rpcError {
	if c == nil {
		return nil
	}
	switch *c {
	case "processed":
		if atLeastConfirmed {
			return &rpcError{Code: codeInvalidParams, Message: commitmentBelowConfirmed}
		}
	case "confirmed", "finalized":
	default:
		return invalidParams(fmt.Sprintf("unknown variant `%s`, expected one of `processed`, `confirmed`, `finalized`", *c))
	}
	return nil
}

// contextConfig parses an optional {commitment, minContextSlot} object at
// params[at] after checking arity max.
func (n *Node) contextConfig(params []json.RawMessage, max, at int, atLeastConfirmed bool) *rpcError {
	if err := arity(params, at, max); err != nil {
		return err
	}
	if len(params) <= at || string(params[at]) == "null" {
		return nil
	}
	var cfg struct {
		Commitment     *string `json:"commitment"`
		MinContextSlot *uint64 `json:"minContextSlot"`
	}
	if err := json.Unmarshal(params[at], &cfg); err != nil {
		return invalidParams(fmt.Sprintf("invalid type: %s, expected struct RpcContextConfig", describe(params[at])))
	}
	if err := commitment(cfg.Commitment, atLeastConfirmed); err != nil {
		return err
	}
	return n.minContextSlot(cfg.MinContextSlot)
}

// codeMinContextSlotNotReached is agave's -32016.
const codeMinContextSlotNotReached = -32016

// minContextSlot is agave's check of a request's minContextSlot against the
// bank it would answer from (here the tip: every slot is finalized): below
// it the node refuses with -32016 and its context slot rather than answer
// from an older view.
func (n *Node) minContextSlot(min *uint64) *rpcError {
	if min == nil || *min <= n.tip {
		return nil
	}
	return &rpcError{Code: codeMinContextSlotNotReached, Message: "Minimum context slot has not been reached",
		Data: map[string]uint64{"contextSlot": n.tip}}
}

func (n *Node) getSlot(params []json.RawMessage) (any, *rpcError) {
	if err := n.contextConfig(params, 1, 0, false); err != nil {
		return nil, err
	}
	return n.tip, nil
}

// encodingConfig parses getBlock's / getTransaction's second parameter:
// RpcEncodingConfigWrapper, i.e. a bare encoding string (deprecated form) or
// a config object.
func encodingConfig(params []json.RawMessage, block bool) (encodeOpts, *string, *rpcError) {
	o := encodeOpts{encoding: "json", details: "full", rewards: true, transaction: !block}
	if len(params) < 2 || string(params[1]) == "null" {
		return o, nil, nil
	}
	untagged := invalidParams(untaggedEncodingConfig)
	raw := params[1]
	if raw[0] == '"' {
		if json.Unmarshal(raw, &o.encoding) != nil || !validEncoding(o.encoding) {
			return o, nil, untagged
		}
		return o, nil, nil
	}
	var cfg struct {
		Encoding                       *string `json:"encoding"`
		TransactionDetails             *string `json:"transactionDetails"`
		Rewards                        *bool   `json:"rewards"`
		Commitment                     *string `json:"commitment"`
		MaxSupportedTransactionVersion *uint8  `json:"maxSupportedTransactionVersion"`
		MinContextSlot                 *uint64 `json:"minContextSlot"`
	}
	if raw[0] != '{' || json.Unmarshal(raw, &cfg) != nil {
		return o, nil, untagged
	}
	if cfg.Encoding != nil {
		if !validEncoding(*cfg.Encoding) {
			return o, nil, untagged
		}
		o.encoding = *cfg.Encoding
	}
	if block {
		if cfg.TransactionDetails != nil {
			switch *cfg.TransactionDetails {
			case "full", "signatures", "none", "accounts":
				o.details = *cfg.TransactionDetails
			default:
				return o, nil, untagged
			}
		}
		if cfg.Rewards != nil {
			o.rewards = *cfg.Rewards
		}
	}
	if cfg.MaxSupportedTransactionVersion != nil {
		v := int(*cfg.MaxSupportedTransactionVersion)
		o.maxVersion = &v
	}
	if cfg.Commitment != nil {
		switch *cfg.Commitment {
		case "processed", "confirmed", "finalized":
		default:
			return o, nil, untagged
		}
	}
	return o, cfg.Commitment, nil
}

func validEncoding(e string) bool {
	switch e {
	case "binary", "base58", "base64", "json", "jsonParsed":
		return true
	}
	return false
}

// renderErr maps render errors to agave's JSON-RPC errors.
func renderErr(err error) *rpcError {
	var uv errUnsupportedVersion
	if errors.As(err, &uv) {
		return &rpcError{Code: codeUnsupportedVersion, Message: uv.Error()}
	}
	return &rpcError{Code: codeInternal, Message: err.Error()}
}

func (n *Node) getBlock(params []json.RawMessage) (any, *rpcError) {
	if err := arity(params, 1, 2); err != nil {
		return nil, err
	}
	slot, perr := parseU64(params[0])
	if perr != nil {
		return nil, perr
	}
	o, c, perr := encodingConfig(params, true)
	if perr != nil {
		return nil, perr
	}
	if perr := commitment(c, true); perr != nil {
		return nil, perr
	}
	if slot > n.tip {
		return nil, &rpcError{Code: codeBlockNotAvailable, Message: fmt.Sprintf("Block not available for slot %d", slot)}
	}
	b := n.blocks[slot]
	if code, lost := n.lost[slot]; lost && b != nil {
		b = nil
		if code == codeLongTermSkipped {
			return nil, &rpcError{Code: code, Message: fmt.Sprintf("Slot %d was skipped, or missing in long-term storage", slot)}
		}
	}
	if b == nil {
		return nil, &rpcError{Code: codeSlotSkipped, Message: fmt.Sprintf("Slot %d was skipped, or missing due to ledger jump to recent snapshot", slot)}
	}
	out := map[string]any{
		"blockHeight":       b.height,
		"blockTime":         b.time,
		"blockhash":         b.hash,
		"parentSlot":        b.parentSlot,
		"previousBlockhash": b.prevHash,
	}
	if o.rewards {
		out["rewards"] = b.rewards
	}
	switch o.details {
	case "signatures":
		sigs := make([]string, len(b.txs))
		for i, t := range b.txs {
			sigs[i] = t.signatures[0]
		}
		out["signatures"] = sigs
	case "full", "accounts":
		txs := make([]any, len(b.txs))
		for i, t := range b.txs {
			r, err := t.render(o)
			if err != nil {
				return nil, renderErr(err)
			}
			txs[i] = r
		}
		out["transactions"] = txs
	}
	return out, nil
}

// getBlocks takes (start, end?, config?) where the second argument may also
// be the config (agave's RpcBlocksConfigWrapper).
func (n *Node) getBlocks(params []json.RawMessage) (any, *rpcError) {
	if err := arity(params, 1, 3); err != nil {
		return nil, err
	}
	start, perr := parseU64(params[0])
	if perr != nil {
		return nil, perr
	}
	end := start + maxBlocksRange
	cfgAt := 2
	if len(params) > 1 && string(params[1]) != "null" {
		if params[1][0] == '{' {
			cfgAt = 1
			if len(params) > 2 {
				return nil, invalidParams("invalid length 3, expected fewer elements in array")
			}
		} else {
			if end, perr = parseU64(params[1]); perr != nil {
				return nil, invalidParams("data did not match any variant of untagged enum RpcBlocksConfigWrapper")
			}
		}
	}
	if perr := n.contextConfig(params, 3, cfgAt, true); perr != nil {
		return nil, perr
	}
	end = min(end, n.tip)
	if end < start {
		return []uint64{}, nil
	}
	if end-start > maxBlocksRange {
		return nil, invalidParams2(fmt.Sprintf("Slot range too large; max %d", maxBlocksRange))
	}
	return n.slotsIn(start, end, -1), nil
}

// invalidParams2 is Error::invalid_params(msg) raised by agave itself
// (message verbatim, no "Invalid params:" prefix).
func invalidParams2(msg string) *rpcError {
	return &rpcError{Code: codeInvalidParams, Message: msg}
}

func (n *Node) getBlocksWithLimit(params []json.RawMessage) (any, *rpcError) {
	if err := arity(params, 2, 3); err != nil {
		return nil, err
	}
	start, perr := parseU64(params[0])
	if perr != nil {
		return nil, perr
	}
	limit, perr := parseU64(params[1])
	if perr != nil {
		return nil, perr
	}
	if perr := n.contextConfig(params, 3, 2, true); perr != nil {
		return nil, perr
	}
	if limit > maxBlocksRange {
		return nil, invalidParams2(fmt.Sprintf("Limit too large; max %d", maxBlocksRange))
	}
	if start > n.tip {
		return []uint64{}, nil
	}
	return n.slotsIn(start, n.tip, int(limit)), nil
}

// slotsIn lists produced slots in [start, end], at most limit (-1: all).
func (n *Node) slotsIn(start, end uint64, limit int) []uint64 {
	out := []uint64{}
	if end-start < uint64(len(n.blocks)) {
		for s := start; s <= end && limit != 0; s++ {
			if n.blocks[s] != nil {
				out = append(out, s)
				limit--
			}
		}
		return out
	}
	for s := range n.blocks {
		if s >= start && s <= end {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	if limit >= 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// verifyBase58 is agave's verify_pubkey / verify_signature.
func verifyBase58(raw json.RawMessage, size int) (string, *rpcError) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalidParams(fmt.Sprintf("invalid type: %s, expected a string", describe(raw)))
	}
	b, err := base58.Decode(s)
	if err != nil || s == "" {
		return "", invalidParams2("Invalid param: Invalid")
	}
	if len(b) != size {
		return "", invalidParams2("Invalid param: WrongSize")
	}
	return s, nil
}

func (n *Node) getTransaction(params []json.RawMessage) (any, *rpcError) {
	if err := arity(params, 1, 2); err != nil {
		return nil, err
	}
	sig, perr := verifyBase58(params[0], 64)
	if perr != nil {
		return nil, perr
	}
	o, c, perr := encodingConfig(params, false)
	if perr != nil {
		return nil, perr
	}
	if perr := commitment(c, true); perr != nil {
		return nil, perr
	}
	t := n.txs[sig]
	if t == nil {
		return nil, nil
	}
	out, err := t.render(o)
	if err != nil {
		return nil, renderErr(err)
	}
	out["slot"] = t.slot
	out["blockTime"] = t.blockTime
	return out, nil
}

func (n *Node) getSignaturesForAddress(params []json.RawMessage) (any, *rpcError) {
	if err := arity(params, 1, 2); err != nil {
		return nil, err
	}
	addr, perr := verifyBase58(params[0], 32)
	if perr != nil {
		return nil, perr
	}
	var cfg struct {
		Limit          *int    `json:"limit"`
		Before         *string `json:"before"`
		Until          *string `json:"until"`
		Commitment     *string `json:"commitment"`
		MinContextSlot *uint64 `json:"minContextSlot"`
	}
	if len(params) > 1 && string(params[1]) != "null" {
		if err := json.Unmarshal(params[1], &cfg); err != nil {
			return nil, invalidParams(fmt.Sprintf("invalid type: %s, expected struct RpcSignaturesForAddressConfig", describe(params[1])))
		}
	}
	for _, s := range []*string{cfg.Before, cfg.Until} {
		if s != nil {
			if _, perr := verifyBase58(mustJSON(*s), 64); perr != nil {
				return nil, perr
			}
		}
	}
	limit := maxSignaturesLimit
	if cfg.Limit != nil {
		limit = *cfg.Limit
	}
	if limit <= 0 || limit > maxSignaturesLimit {
		return nil, invalidParams2(fmt.Sprintf("Invalid limit; max %d", maxSignaturesLimit))
	}
	if perr := commitment(cfg.Commitment, true); perr != nil {
		return nil, perr
	}
	if perr := n.minContextSlot(cfg.MinContextSlot); perr != nil {
		return nil, perr
	}
	refs := n.signaturesFor(addr)
	if cfg.Before != nil {
		i := 0
		for i < len(refs) && refs[i].tx.signatures[0] != *cfg.Before {
			i++
		}
		if i == len(refs) {
			return []any{}, nil
		}
		refs = refs[i+1:]
	}
	out := []any{}
	for _, r := range refs {
		sig := r.tx.signatures[0]
		if (cfg.Until != nil && sig == *cfg.Until) || len(out) == limit {
			break
		}
		out = append(out, map[string]any{
			"blockTime":          r.tx.blockTime,
			"confirmationStatus": "finalized",
			"err":                r.tx.meta["err"],
			"memo":               nil,
			"signature":          sig,
			"slot":               r.slot,
		})
	}
	return out, nil
}

func (n *Node) getBalance(params []json.RawMessage) (any, *rpcError) {
	if err := arity(params, 1, 2); err != nil {
		return nil, err
	}
	addr, perr := verifyBase58(params[0], 32)
	if perr != nil {
		return nil, perr
	}
	if perr := n.contextConfig(params, 2, 1, false); perr != nil {
		return nil, perr
	}
	return map[string]any{
		"context": map[string]any{"apiVersion": "2.2.0", "slot": n.tip},
		"value":   n.balances[addr],
	}, nil
}

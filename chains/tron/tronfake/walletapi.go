package tronfake

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// walletEndpoints are the endpoints a wallet uses to build, sign-check and
// send transactions and read accounts (FullNodeHttpApiService's servlets of
// the same names).
var walletEndpoints = map[string]endpoint{
	"/wallet/createtransaction":               (*Node).createTransaction,
	"/wallet/triggersmartcontract":            (*Node).triggerSmartContract,
	"/wallet/triggerconstantcontract":         (*Node).triggerConstantContract,
	"/walletsolidity/triggerconstantcontract": solidity((*Node).triggerConstantContract),
	"/wallet/broadcasttransaction":            (*Node).broadcastTransaction,
	"/wallet/broadcasthex":                    (*Node).broadcastHex,
	"/wallet/getaccount":                      (*Node).getAccount,
	"/walletsolidity/getaccount":              solidity((*Node).getAccount),
	"/wallet/getblock":                        (*Node).getBlock,
	"/walletsolidity/getblock":                solidity((*Node).getBlock),
	"/wallet/getcontract":                     (*Node).getContract,
}

// errPostOnly is a GET on a servlet whose doGet is empty: HTTP 200, no body.
var errPostOnly = errors.New("tronfake: POST only")

// nowMillis is the wall clock createtransaction stamps (TransactionCapsule.setTimestamp).
var nowMillis = func() int64 { return time.Now().UnixMilli() }

// bodyObject parses a POST body as fastjson does and refuses visible=true.
func bodyObject(p params) (map[string]json.RawMessage, error) {
	if p.get {
		return nil, errPostOnly
	}
	if strings.TrimSpace(p.body) == "" {
		return nil, javaError{"java.lang.NullPointerException", "null"}
	}
	m, err := jsonFields(json.RawMessage(p.body))
	if err != nil {
		return nil, javaError{"com.alibaba.fastjson.JSONException", "syntax error, " + fastjsonPos(p.body)}
	}
	if string(m["visible"]) == "true" {
		return nil, javaError{"tronfake", "visible=true is not implemented by the fake; use hex addresses (TronWeb's default)"}
	}
	return m, nil
}

// mergeError renders a JsonFormat failure as Util.processError does.
func mergeError(err error) error {
	if pe, ok := err.(jsonParseError); ok {
		return javaError{"org.tron.core.services.http.JsonFormat$ParseException", pe.msg}
	}
	return err
}

// referenceLocked fills what Wallet.setTransaction fills: the head block as
// the reference, expiration 60 s after it, the wall-clock timestamp.
func (n *Node) referenceLocked(r *rawData) {
	head := n.blocks[n.tipLocked()]
	id, _ := hex.DecodeString(head.id)
	r.refBlockBytes = id[6:8]
	r.refBlockHash = id[8:16]
	r.expiration = head.timestamp + expirationMs
	r.timestamp = nowMillis()
}

// createdJSON is Util.printCreateTransaction: the transaction with txID,
// raw_data, raw_data_hex and visible.
func createdJSON(r *rawData, extra map[string]any) (map[string]any, error) {
	rawBytes := r.marshal()
	t := newSignedTx(r, rawBytes, nil)
	raw, err := r.json()
	if err != nil {
		return nil, err
	}
	out := map[string]any{"visible": false, "txID": t.id, "raw_data": raw, "raw_data_hex": hex.EncodeToString(rawBytes)}
	for k, v := range extra {
		out[k] = v
	}
	return out, nil
}

// extras applies Util.setTransactionPermissionId and setTransactionExtraData.
func extras(m map[string]json.RawMessage, r *rawData) error {
	pid, err := jsonInt(m, "Permission_id")
	if err != nil {
		return mergeError(err)
	}
	if pid > 0 {
		r.contracts[0].permissionID = pid
	}
	if d, ok := m["extra_data"]; ok {
		var s string
		if json.Unmarshal(d, &s) == nil && s != "" {
			b, err := fromHexString(s)
			if err != nil {
				return javaError{"org.bouncycastle.util.encoders.DecoderException", "exception decoding Hex string: invalid characters encountered in Hex string"}
			}
			r.data = b
		}
	}
	return nil
}

// createTransaction is TransferServlet: the node validates the transfer
// against the head state and builds the unsigned transaction.
func (n *Node) createTransaction(p params) (string, error) {
	m, err := bodyObject(p)
	if err != nil {
		return "", err
	}
	v, err := transferFromJSON(json.RawMessage(p.body))
	if err != nil {
		return "", mergeError(err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	w := n.walletLocked()
	bal := int64(0)
	if a := w.accounts[string(v.owner)]; a != nil {
		bal = a.balance
	}
	if rej := validateTransfer(w, v, bal); rej != nil {
		return "", javaError{"org.tron.core.exception.ContractValidateException", strings.TrimPrefix(rej.message, contractValidPrefix)}
	}
	r := &rawData{contracts: []txContract{{ctype: ctTransfer, typeURL: "type.googleapis.com/protocol.TransferContract", value: v.marshal()}}}
	n.referenceLocked(r)
	if err := extras(m, r); err != nil {
		return "", err
	}
	out, err := createdJSON(r, nil)
	if err != nil {
		return "", err
	}
	return string(mustJSON(out)), nil
}

// extentionReturn renders a TransactionExtention's result: {"result":true}
// or {"code":…,"message":hex} (visible=false prints Return.message as hex).
func extentionReturn(code, msg string) map[string]any {
	if code == "" {
		return map[string]any{"result": true}
	}
	return map[string]any{"code": code, "message": hex.EncodeToString([]byte(msg))}
}

// otherError is the trigger servlets' catch-all: OTHER_ERROR with the
// exception's class and message.
func otherError(err error) string {
	msg := err.Error()
	if _, ok := err.(javaError); !ok {
		msg = "class java.lang.Exception : " + msg
	}
	return string(mustJSON(map[string]any{"result": extentionReturn(codeOther, strings.ReplaceAll(msg, `"`, "'"))}))
}

// triggerArgs merges a TriggerSmartContract request as the trigger
// servlets do: function_selector and parameter become data, the long
// fields are read with getJsonLongValue.
func triggerArgs(m map[string]json.RawMessage, body string, needOwner bool) (triggerValue, int64, error) {
	if needOwner {
		for _, k := range []string{"owner_address", "contract_address"} {
			if jsonString(m, k) == "" {
				return triggerValue{}, 0, javaError{"java.security.InvalidParameterException", k + " isn't set."}
			}
		}
	}
	v, err := triggerFromJSON(json.RawMessage(body))
	if err != nil {
		return v, 0, mergeError(err)
	}
	if sel := jsonString(m, "function_selector"); sel != "" {
		data, err := fromHexString(selector(sel) + jsonString(m, "parameter"))
		if err != nil {
			return v, 0, javaError{"org.bouncycastle.util.encoders.DecoderException", "exception decoding Hex string: invalid characters encountered in Hex string"}
		}
		v.data = data
	}
	feeLimit, err := jsonInt(m, "fee_limit")
	if err != nil {
		return v, 0, mergeError(err)
	}
	return v, feeLimit, nil
}

// triggerSmartContract is TriggerSmartContractServlet: the node builds the
// call's unsigned transaction (a view function is executed instead, as
// Wallet.triggerContract does).
func (n *Node) triggerSmartContract(p params) (string, error) {
	m, err := bodyObject(p)
	if err != nil {
		if errors.Is(err, errPostOnly) {
			return "", err
		}
		return otherError(err), nil
	}
	v, feeLimit, err := triggerArgs(m, p.body, true)
	if err != nil {
		return otherError(err), nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	w := n.walletLocked()
	if w.tokens[string(v.contract)] == nil {
		return string(mustJSON(map[string]any{"result": extentionReturn(codeContractValid, "No contract or not a valid smart contract")})), nil
	}
	r := &rawData{contracts: []txContract{{ctype: ctTrigger, typeURL: "type.googleapis.com/protocol.TriggerSmartContract", value: v.marshal()}}}
	n.referenceLocked(r)
	r.feeLimit = feeLimit
	if err := extras(m, r); err != nil {
		return "", err
	}
	r.data = nil // the trigger servlet sets no extra data
	if constant(v.data) {
		return n.constantAnswerLocked(r, v, n.viewAt(p.solid)), nil
	}
	tx, err := createdJSON(r, nil)
	if err != nil {
		return "", err
	}
	return string(mustJSON(map[string]any{"result": extentionReturn("", ""), "transaction": tx})), nil
}

// triggerConstantContract is TriggerConstantContractServlet: the call is
// executed against the head (or, under /walletsolidity, the solidified)
// state and nothing is kept.
func (n *Node) triggerConstantContract(p params) (string, error) {
	m, err := bodyObject(p)
	if err != nil {
		if errors.Is(err, errPostOnly) {
			return "", err
		}
		return otherError(err), nil
	}
	v, _, err := triggerArgs(m, p.body, true)
	if err != nil {
		return otherError(err), nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.walletLocked().tokens[string(v.contract)] == nil {
		return string(mustJSON(map[string]any{"result": extentionReturn(codeContractValid, "Smart contract is not exist.")})), nil
	}
	r := &rawData{contracts: []txContract{{ctype: ctTrigger, typeURL: "type.googleapis.com/protocol.TriggerSmartContract", value: v.marshal()}}}
	n.referenceLocked(r)
	if err := extras(m, r); err != nil {
		return "", err
	}
	return n.constantAnswerLocked(r, v, n.viewAt(p.solid)), nil
}

// constantAnswerLocked runs a call without keeping it (Wallet.callConstantContract).
func (n *Node) constantAnswerLocked(r *rawData, v triggerValue, view viewLocked) string {
	tok := n.walletLocked().tokens[string(v.contract)]
	res := tok.call(string(v.contract), string(v.owner), v.data, func(h string) *big.Int {
		return view.tokenBalance(string(v.contract), h)
	})
	tx, _ := createdJSON(r, nil)
	ret := map[string]any{}
	result := extentionReturn("", "")
	if res.revert {
		ret["ret"] = "FAILED"
		result["message"] = hex.EncodeToString([]byte("REVERT opcode executed"))
	}
	tx["ret"] = []map[string]any{ret}
	out := map[string]any{
		"result":          result,
		"energy_used":     res.energy,
		"constant_result": []string{hex.EncodeToString(res.out)},
		"transaction":     tx,
	}
	if len(res.logs) > 0 {
		out["logs"] = res.logs
	}
	return string(mustJSON(out))
}

// broadcastAnswer is BroadcastServlet's answer: {"result":true,"txid":…}
// or {"code":…,"txid":…,"message":hex}, in fastjson's HashMap order.
func broadcastAnswer(id string, rej *rejection) string {
	if rej == nil {
		return fmt.Sprintf(`{"result":true,"txid":%q}`, id)
	}
	return fmt.Sprintf(`{"code":%q,"txid":%q,"message":%q}`, rej.code, id, hex.EncodeToString([]byte(rej.message)))
}

// broadcastTransaction is BroadcastServlet: the posted JSON is packed back
// into protobuf (raw_data_hex and txID are not trusted), then checked and
// applied.
func (n *Node) broadcastTransaction(p params) (string, error) {
	if p.get {
		return "", errPostOnly
	}
	pt, err := packTransaction(p.body)
	if err != nil {
		return "", err
	}
	t := newSignedTx(pt.raw, nil, pt.sigs)
	n.mu.Lock()
	defer n.mu.Unlock()
	return broadcastAnswer(t.id, n.broadcastLocked(t, pt.skipped)), nil
}

// broadcastHex is BroadcastHexServlet: {"transaction": hex of
// protocol.Transaction}; the answer carries the message as text and the
// transaction printed with visible=true.
func (n *Node) broadcastHex(p params) (string, error) {
	m, err := bodyObject(p)
	if err != nil {
		return "", err
	}
	b, err := fromHexString(jsonString(m, "transaction"))
	if err != nil {
		return "", javaError{"org.bouncycastle.util.encoders.DecoderException", "exception decoding Hex string: invalid characters encountered in Hex string"}
	}
	rawBytes, sigs, err := unmarshalTx(b)
	if err != nil {
		return "", javaError{"com.google.protobuf.InvalidProtocolBufferException", err.Error()}
	}
	raw, err := unmarshalRaw(rawBytes)
	if err != nil {
		return "", javaError{"com.google.protobuf.InvalidProtocolBufferException", err.Error()}
	}
	var skipped []string
	kept := raw.contracts[:0]
	for _, c := range raw.contracts {
		if c.ctype == ctTransfer || c.ctype == ctTrigger {
			kept = append(kept, c)
		} else {
			skipped = append(skipped, c.typeName())
		}
	}
	if len(skipped) > 0 {
		raw.contracts = kept
	}
	t := newSignedTx(raw, rawBytes, sigs)
	n.mu.Lock()
	rej := n.broadcastLocked(t, skipped)
	n.mu.Unlock()
	code, msg, ok := "SUCCESS", "", true
	if rej != nil {
		code, msg, ok = rej.code, rej.message, false
	}
	return fmt.Sprintf(`{"result":%t,"code":%q,"txid":%q,"message":%s,"transaction":%s}`,
		ok, code, t.id, mustJSON(msg), mustJSON(rawJSONVisible(raw, sigs))), nil
}

// addressParam reads the "address" (hex) of a getaccount call, by GET or
// POST.
func addressParam(p params, key string) ([]byte, error) {
	var s string
	if p.get {
		if v := p.query["visible"]; len(v) > 0 && v[0] == "true" {
			return nil, javaError{"tronfake", "visible=true is not implemented by the fake; use hex addresses (TronWeb's default)"}
		}
		s = strings.Join(p.query[key], "")
	} else {
		m, err := bodyObject(p)
		if err != nil {
			return nil, err
		}
		s = jsonString(m, key)
	}
	b, err := fromHexString(s)
	if err != nil {
		return nil, javaError{"org.tron.core.services.http.JsonFormat$ParseException", "INVALID hex String"}
	}
	return b, nil
}

// getAccount is GetAccountServlet: the account as protocol.Account prints
// with visible=false, or {} when there is none (at the solidified block
// under /walletsolidity).
func (n *Node) getAccount(p params) (string, error) {
	addr, err := addressParam(p, "address")
	if err != nil {
		return "", err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	a, bal := n.viewAt(p.solid).account(string(addr))
	if a == nil {
		return "{}", nil
	}
	hexAddr := hex.EncodeToString(addr)
	key := []map[string]any{{"address": hexAddr, "weight": 1}}
	out := map[string]any{
		"address":              hexAddr,
		"create_time":          a.created,
		"latest_opration_time": a.lastOp,
		"owner_permission":     map[string]any{"keys": key, "permission_name": "owner", "threshold": 1},
		"active_permission": []map[string]any{{"id": 2, "keys": key, "operations": "7fff1fc0033efb0f000000000000000000000000000000000000000000000000",
			"permission_name": "active", "threshold": 1, "type": "Active"}},
		"frozenV2": []map[string]any{{}, {"type": "ENERGY"}, {"type": "TRON_POWER"}},
	}
	if bal != 0 {
		out["balance"] = bal
	}
	if u := a.decayedFreeNet(int64(n.tipLocked())); u > 0 && !p.solid {
		out["free_net_usage"] = u
		out["latest_consume_free_time"] = a.freeNetTime
	}
	return string(mustJSON(out)), nil
}

// getBlock is GetBlockServlet: id_or_num (a number or a blockID; none for
// the head) and detail (false drops the transactions).
func (n *Node) getBlock(p params) (string, error) {
	var idOrNum string
	var detail bool
	if p.get {
		idOrNum = strings.Join(p.query["id_or_num"], "")
		detail = strings.Join(p.query["detail"], "") == "true"
	} else if strings.TrimSpace(p.body) != "" {
		m, err := jsonFields(json.RawMessage(p.body))
		if err != nil {
			return "", javaError{"com.alibaba.fastjson.JSONException", "syntax error, " + fastjsonPos(p.body)}
		}
		idOrNum = jsonString(m, "id_or_num")
		detail = string(m["detail"]) == "true"
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	limit := n.limitLocked(p.solid)
	var b *block
	if idOrNum == "" {
		b = n.blocks[limit]
	} else if num, err := strconv.ParseInt(idOrNum, 10, 64); err == nil {
		if num < 0 {
			return `{"Error":"num must be non-positive number."}`, nil
		}
		if uint64(num) > limit {
			return "{}", nil
		}
		b = n.blocks[uint64(num)]
	} else {
		if len(idOrNum) != 64 {
			return `{"Error":"id must be legal block hash."}`, nil
		}
		for h, c := range n.blocks {
			if c.id == strings.ToLower(idOrNum) && h <= limit {
				b = c
			}
		}
	}
	if b == nil {
		return "{}", nil
	}
	if detail || len(b.txs) == 0 {
		return string(b.json), nil
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(b.json, &body); err != nil {
		return "", err
	}
	delete(body, "transactions")
	return string(mustJSON(body)), nil
}

// getContract is GetContractServlet for the simulated TRC-20 contracts.
func (n *Node) getContract(p params) (string, error) {
	addr, err := addressParam(p, "value")
	if err != nil {
		return "", err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	t := n.walletLocked().tokens[string(addr)]
	if t == nil {
		return "{}", nil
	}
	return string(mustJSON(map[string]any{
		"abi":                           t.abiJSON(),
		"consume_user_resource_percent": 100,
		"contract_address":              hex.EncodeToString(addr),
		"name":                          strings.ReplaceAll(t.name, " ", ""),
		"origin_address":                hex.EncodeToString(t.origin),
		"origin_energy_limit":           10_000_000,
	})), nil
}

package solanafake

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/mr-tron/base58"
)

// The JSON-RPC methods a wallet uses to send and follow a transaction and
// read accounts (agave rpc/src/rpc.rs). Codes beyond JSON-RPC's:
const (
	codePreflightFailure       = -32002
	codeSignatureVerifyFailure = -32003
	// maxSignatureStatuses is MAX_GET_SIGNATURE_STATUSES_QUERY_ITEMS.
	maxSignatureStatuses = 256
	// maxMultipleAccounts is MAX_MULTIPLE_ACCOUNTS.
	maxMultipleAccounts = 100
	apiVersion          = "2.2.0"
)

// walletDispatch answers the wallet methods; ok is false for a method it
// does not know. Callers hold n.mu.
func (n *Node) walletDispatch(method string, params []json.RawMessage) (any, *rpcError, bool) {
	var out any
	var err *rpcError
	switch method {
	case "sendTransaction":
		out, err = n.sendTransaction(params)
	case "simulateTransaction":
		out, err = n.simulateTransaction(params)
	case "getLatestBlockhash":
		out, err = n.getLatestBlockhash(params)
	case "isBlockhashValid":
		out, err = n.isBlockhashValid(params)
	case "getSignatureStatuses":
		out, err = n.getSignatureStatuses(params)
	case "getFeeForMessage":
		out, err = n.getFeeForMessage(params)
	case "getMinimumBalanceForRentExemption":
		out, err = n.getMinimumBalanceForRentExemption(params)
	case "getAccountInfo":
		out, err = n.getAccountInfo(params)
	case "getMultipleAccounts":
		out, err = n.getMultipleAccounts(params)
	case "getTokenAccountBalance":
		out, err = n.getTokenAccountBalance(params)
	case "getTokenAccountsByOwner":
		out, err = n.getTokenAccountsByOwner(params)
	default:
		return nil, nil, false
	}
	return out, err, true
}

// withContext wraps a value as agave's RpcResponse.
func (n *Node) withContext(v any) map[string]any {
	return map[string]any{"context": map[string]any{"apiVersion": apiVersion, "slot": n.tip}, "value": v}
}

// sendConfig is RpcSendTransactionConfig.
type sendConfig struct {
	SkipPreflight       bool    `json:"skipPreflight"`
	PreflightCommitment *string `json:"preflightCommitment"`
	Encoding            *string `json:"encoding"`
	MaxRetries          *uint64 `json:"maxRetries"`
	MinContextSlot      *uint64 `json:"minContextSlot"`
}

// encodedTx reads params[0] (the encoded transaction) and the config's
// binary encoding (base58 by default).
func encodedTx(params []json.RawMessage, encoding *string) (*wireTx, *rpcError) {
	var s string
	if err := json.Unmarshal(params[0], &s); err != nil {
		return nil, invalidParams(fmt.Sprintf("invalid type: %s, expected a string", describe(params[0])))
	}
	enc := "base58"
	if encoding != nil {
		enc = *encoding
	}
	return decodeTransaction(s, enc)
}

// simulationValue is RpcSimulateTransactionResult.
func simulationValue(r *execResult) map[string]any {
	var errJSON any
	if r.err != nil {
		errJSON = r.err.json
	}
	logs := r.logs
	if logs == nil {
		logs = []string{}
	}
	return map[string]any{
		"accounts":             nil,
		"err":                  errJSON,
		"innerInstructions":    nil,
		"logs":                 logs,
		"replacementBlockhash": nil,
		"returnData":           nil,
		"unitsConsumed":        r.units,
	}
}

// sendTransaction sanitizes the transaction, verifies its signatures and
// simulates it against the current state (unless skipPreflight), then
// queues it for the next slot and answers its signature. A transaction
// already queued is answered again without being queued twice; one whose
// signatures are bad and that skipped preflight is dropped, as a leader's
// signature verification drops it.
func (n *Node) sendTransaction(params []json.RawMessage) (any, *rpcError) {
	if err := arity(params, 1, 2); err != nil {
		return nil, err
	}
	var cfg sendConfig
	if len(params) > 1 && string(params[1]) != "null" {
		if err := json.Unmarshal(params[1], &cfg); err != nil {
			return nil, invalidParams(fmt.Sprintf("invalid type: %s, expected struct RpcSendTransactionConfig", describe(params[1])))
		}
	}
	if perr := commitment(cfg.PreflightCommitment, false); perr != nil {
		return nil, perr
	}
	t, perr := encodedTx(params, cfg.Encoding)
	if perr != nil {
		return nil, perr
	}
	if perr := t.sanitize(); perr != nil {
		return nil, perr
	}
	sig := t.signature()
	valid := t.verify()
	if !cfg.SkipPreflight {
		if !valid {
			return nil, &rpcError{Code: codeSignatureVerifyFailure, Message: "Transaction signature verification failure"}
		}
		if r := n.processLocked(t); r.err != nil {
			return nil, &rpcError{Code: codePreflightFailure, Message: "Transaction simulation failed: " + r.err.text, Data: simulationValue(r)}
		}
	}
	if !valid {
		return sig, nil
	}
	for _, p := range n.pending {
		if p.sig == sig {
			return sig, nil
		}
	}
	n.pending = append(n.pending, &pending{sig: sig, signed: t})
	return sig, nil
}

// simulateConfig is RpcSimulateTransactionConfig.
type simulateConfig struct {
	SigVerify              bool    `json:"sigVerify"`
	ReplaceRecentBlockhash bool    `json:"replaceRecentBlockhash"`
	Commitment             *string `json:"commitment"`
	Encoding               *string `json:"encoding"`
	Accounts               *struct {
		Addresses []string `json:"addresses"`
		Encoding  *string  `json:"encoding"`
	} `json:"accounts"`
	MinContextSlot    *uint64 `json:"minContextSlot"`
	InnerInstructions bool    `json:"innerInstructions"`
}

// simulateTransaction runs a transaction without keeping it.
func (n *Node) simulateTransaction(params []json.RawMessage) (any, *rpcError) {
	if err := arity(params, 1, 2); err != nil {
		return nil, err
	}
	var cfg simulateConfig
	if len(params) > 1 && string(params[1]) != "null" {
		if err := json.Unmarshal(params[1], &cfg); err != nil {
			return nil, invalidParams(fmt.Sprintf("invalid type: %s, expected struct RpcSimulateTransactionConfig", describe(params[1])))
		}
	}
	if perr := commitment(cfg.Commitment, false); perr != nil {
		return nil, perr
	}
	t, perr := encodedTx(params, cfg.Encoding)
	if perr != nil {
		return nil, perr
	}
	var replacement any
	if cfg.ReplaceRecentBlockhash {
		if cfg.SigVerify {
			return nil, invalidParams2("sigVerify may not be used with replaceRecentBlockhash")
		}
		t.blockhash = n.last.hash
		replacement = map[string]any{"blockhash": n.last.hash, "lastValidBlockHeight": n.last.height + maxProcessingAge}
	}
	if perr := t.sanitize(); perr != nil {
		return nil, perr
	}
	if cfg.SigVerify && !t.verify() {
		return nil, &rpcError{Code: codeSignatureVerifyFailure, Message: "Transaction signature verification failure"}
	}
	r := n.processLocked(t)
	v := simulationValue(r)
	v["replacementBlockhash"] = replacement
	if cfg.Accounts != nil {
		if len(cfg.Accounts.Addresses) > len(t.keys) {
			return nil, invalidParams2(fmt.Sprintf("Too many accounts provided; max %d", len(t.keys)))
		}
		enc := "base64"
		if cfg.Accounts.Encoding != nil {
			enc = *cfg.Accounts.Encoding
		}
		if enc == "base58" || enc == "binary" {
			return nil, invalidParams2("base58 encoding not supported")
		}
		accts := make([]any, len(cfg.Accounts.Addresses))
		for i, a := range cfg.Accounts.Addresses {
			if r.err != nil {
				continue
			}
			key, perr := verifyBase58(mustJSON(a), 32)
			if perr != nil {
				return nil, perr
			}
			st := r.writes[key]
			if st == nil {
				st = &acctState{lamports: n.balances[key], owner: n.ownerOf(key), data: n.dataOf(key)}
			}
			accts[i] = n.renderAccount(key, st, enc, nil)
		}
		v["accounts"] = accts
	}
	if cfg.InnerInstructions {
		inner := []any{}
		f := r.storedTx(t)
		if ii, ok := f.meta["innerInstructions"]; ok {
			var list []innerJSON
			_ = json.Unmarshal(ii, &list)
			for _, group := range list {
				inner = append(inner, parsedInner(f, group))
			}
		}
		v["innerInstructions"] = inner
	}
	return n.withContext(v), nil
}

// getLatestBlockhash answers the newest block's hash and the last block
// height at which it is still usable.
func (n *Node) getLatestBlockhash(params []json.RawMessage) (any, *rpcError) {
	if err := n.contextConfig(params, 1, 0, false); err != nil {
		return nil, err
	}
	return n.withContext(map[string]any{"blockhash": n.last.hash, "lastValidBlockHeight": n.last.height + maxProcessingAge}), nil
}

func (n *Node) isBlockhashValid(params []json.RawMessage) (any, *rpcError) {
	if err := arity(params, 1, 2); err != nil {
		return nil, err
	}
	hash, perr := verifyBase58(params[0], 32)
	if perr != nil {
		return nil, invalidParams2(fmt.Sprintf("Invalid param: %s", "Invalid"))
	}
	if err := n.contextConfig(params, 2, 1, false); err != nil {
		return nil, err
	}
	return n.withContext(n.blockhashValidLocked(hash)), nil
}

// getSignatureStatuses answers each signature's status: null when the
// node has not processed it, else its slot, err and confirmation status
// (every slot is finalized here, so confirmations is null).
func (n *Node) getSignatureStatuses(params []json.RawMessage) (any, *rpcError) {
	if err := arity(params, 1, 2); err != nil {
		return nil, err
	}
	var sigs []string
	if err := json.Unmarshal(params[0], &sigs); err != nil {
		return nil, invalidParams(fmt.Sprintf("invalid type: %s, expected a sequence", describe(params[0])))
	}
	if len(sigs) > maxSignatureStatuses {
		return nil, invalidParams2(fmt.Sprintf("Too many inputs provided; max %d", maxSignatureStatuses))
	}
	if len(params) > 1 && string(params[1]) != "null" {
		var cfg struct {
			SearchTransactionHistory bool `json:"searchTransactionHistory"`
		}
		if err := json.Unmarshal(params[1], &cfg); err != nil {
			return nil, invalidParams(fmt.Sprintf("invalid type: %s, expected struct RpcSignatureStatusConfig", describe(params[1])))
		}
	}
	out := make([]any, len(sigs))
	for i, s := range sigs {
		if _, perr := verifyBase58(mustJSON(s), 64); perr != nil {
			return nil, perr
		}
		t := n.txs[s]
		if t == nil {
			continue
		}
		status := map[string]any{
			"confirmationStatus": "finalized",
			"confirmations":      nil,
			"err":                t.meta["err"],
			"slot":               t.slot,
			"status":             t.meta["status"],
		}
		out[i] = status
	}
	return n.withContext(out), nil
}

// getFeeForMessage answers the fee of a base64 message, or null when its
// blockhash is no longer valid.
func (n *Node) getFeeForMessage(params []json.RawMessage) (any, *rpcError) {
	if err := arity(params, 1, 2); err != nil {
		return nil, err
	}
	var s string
	if err := json.Unmarshal(params[0], &s); err != nil {
		return nil, invalidParams(fmt.Sprintf("invalid type: %s, expected a string", describe(params[0])))
	}
	if err := n.contextConfig(params, 2, 1, false); err != nil {
		return nil, err
	}
	msg, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, invalidParams2(fmt.Sprintf("invalid base64 encoding: %v", err))
	}
	// A message is a transaction without its signature section.
	t, perr := parseWire(append([]byte{0}, msg...))
	if perr != nil {
		return nil, invalidParams2(fmt.Sprintf("failed to deserialize solana_message::versions::VersionedMessage: %v", perr))
	}
	if t.header.NumRequiredSignatures == 0 || t.header.NumRequiredSignatures > len(t.keys) {
		return nil, invalidParams2("invalid transaction message: Transaction failed to sanitize accounts offsets correctly")
	}
	for _, in := range t.instrs {
		if in.program == 0 || in.program >= len(t.keys) {
			return nil, invalidParams2("invalid transaction message: Transaction failed to sanitize accounts offsets correctly")
		}
	}
	if !n.blockhashValidLocked(t.blockhash) {
		return n.withContext(nil), nil
	}
	b, berr := t.computeBudget()
	if berr != nil {
		return n.withContext(nil), nil
	}
	return n.withContext(b.fee(t.header.NumRequiredSignatures)), nil
}

func (n *Node) getMinimumBalanceForRentExemption(params []json.RawMessage) (any, *rpcError) {
	if err := arity(params, 1, 2); err != nil {
		return nil, err
	}
	var size int
	if err := json.Unmarshal(params[0], &size); err != nil || size < 0 {
		return nil, invalidParams(fmt.Sprintf("invalid type: %s, expected usize", describe(params[0])))
	}
	if err := n.contextConfig(params, 2, 1, false); err != nil {
		return nil, err
	}
	return rentExempt(size), nil
}

// accountConfig is RpcAccountInfoConfig.
type accountConfig struct {
	Encoding       *string    `json:"encoding"`
	DataSlice      *dataSlice `json:"dataSlice"`
	Commitment     *string    `json:"commitment"`
	MinContextSlot *uint64    `json:"minContextSlot"`
}

type dataSlice struct {
	Offset int `json:"offset"`
	Length int `json:"length"`
}

func parseAccountConfig(params []json.RawMessage, at int) (accountConfig, *rpcError) {
	var cfg accountConfig
	if len(params) > at && string(params[at]) != "null" {
		if err := json.Unmarshal(params[at], &cfg); err != nil {
			return cfg, invalidParams(fmt.Sprintf("invalid type: %s, expected struct RpcAccountInfoConfig", describe(params[at])))
		}
	}
	if perr := commitment(cfg.Commitment, false); perr != nil {
		return cfg, perr
	}
	if cfg.Encoding != nil {
		switch *cfg.Encoding {
		case "binary", "base58", "base64", "jsonParsed":
		case "base64+zstd":
			return cfg, invalidParams2("solanafake does not compress account data: use base64")
		default:
			return cfg, invalidParams(fmt.Sprintf("unknown variant `%s`, expected one of `binary`, `base58`, `base64`, `jsonParsed`, `base64+zstd`", *cfg.Encoding))
		}
	}
	return cfg, nil
}

// maxBase58Bytes is MAX_BASE58_BYTES: account data larger than this is
// not served in base58.
const maxBase58Bytes = 128

// accountLocked renders an account of the current state, or nil when it
// does not exist; base58 of more than 128 bytes of data is agave's
// check_slice_and_encoding error.
func (n *Node) accountLocked(key, encoding string, slice *dataSlice) (any, *rpcError) {
	if !n.exists(key) {
		return nil, nil
	}
	if encoding == "binary" || encoding == "base58" {
		l := len(n.dataOf(key))
		if slice != nil {
			l = min(max(slice.Length, 0), max(l-max(slice.Offset, 0), 0))
		}
		if l > maxBase58Bytes {
			return nil, invalidParams2(fmt.Sprintf("Encoded binary (base 58) data should be less than %d bytes, please use Base64 encoding.", maxBase58Bytes))
		}
	}
	return n.renderAccount(key, &acctState{lamports: n.balances[key], owner: n.ownerOf(key), data: n.dataOf(key)}, encoding, slice), nil
}

// renderAccount is agave's UiAccount: data in the asked encoding
// (jsonParsed for Token program accounts, else base64 as agave falls back).
func (n *Node) renderAccount(key string, a *acctState, encoding string, slice *dataSlice) map[string]any {
	_, executable := programs[key]
	data := a.data
	out := map[string]any{
		"executable": executable,
		"lamports":   a.lamports,
		"owner":      a.owner,
		"rentEpoch":  rentEpochExempt,
		"space":      len(data),
	}
	if executable && a.lamports == 0 {
		out["lamports"] = 1
	}
	if encoding == "jsonParsed" {
		if parsed := n.parseAccountData(a); parsed != nil {
			out["data"] = parsed
			return out
		}
		encoding = "base64"
	}
	if slice != nil {
		off := min(max(slice.Offset, 0), len(data))
		end := min(off+max(slice.Length, 0), len(data))
		data = data[off:end]
	}
	switch encoding {
	case "base58":
		out["data"] = []string{base58.Encode(data), "base58"}
	case "base64":
		out["data"] = []string{base64.StdEncoding.EncodeToString(data), "base64"}
	default: // legacy "binary": a bare base58 string
		out["data"] = base58.Encode(data)
	}
	return out
}

// parseAccountData is account-decoder's parse for Token program accounts
// (nil for anything else).
func (n *Node) parseAccountData(a *acctState) map[string]any {
	if a.owner != TokenProgram {
		return nil
	}
	if ta, ok := unpackTokenAccount(a.data); ok {
		m, ok := n.mintOf(ta.mint)
		if !ok {
			return nil
		}
		state := map[byte]string{1: "initialized", 2: "frozen"}[ta.state]
		return map[string]any{
			"parsed": map[string]any{"info": map[string]any{
				"isNative": false, "mint": ta.mint, "owner": ta.owner, "state": state,
				"tokenAmount": uiTokenAmount(ta.amount, m.decimals),
			}, "type": "account"},
			"program": "spl-token",
			"space":   len(a.data),
		}
	}
	if m, ok := unpackMint(a.data); ok {
		var authority any
		if m.authority != "" {
			authority = m.authority
		}
		return map[string]any{
			"parsed": map[string]any{"info": map[string]any{
				"decimals": m.decimals, "freezeAuthority": nil, "isInitialized": true,
				"mintAuthority": authority, "supply": fmt.Sprint(m.supply),
			}, "type": "mint"},
			"program": "spl-token",
			"space":   len(a.data),
		}
	}
	return nil
}

func encodingOf(cfg accountConfig) string {
	if cfg.Encoding == nil {
		return "binary"
	}
	return *cfg.Encoding
}

func (n *Node) getAccountInfo(params []json.RawMessage) (any, *rpcError) {
	if err := arity(params, 1, 2); err != nil {
		return nil, err
	}
	key, perr := verifyBase58(params[0], 32)
	if perr != nil {
		return nil, perr
	}
	cfg, perr := parseAccountConfig(params, 1)
	if perr != nil {
		return nil, perr
	}
	a, perr := n.accountLocked(key, encodingOf(cfg), cfg.DataSlice)
	if perr != nil {
		return nil, perr
	}
	return n.withContext(a), nil
}

func (n *Node) getMultipleAccounts(params []json.RawMessage) (any, *rpcError) {
	if err := arity(params, 1, 2); err != nil {
		return nil, err
	}
	var keys []string
	if err := json.Unmarshal(params[0], &keys); err != nil {
		return nil, invalidParams(fmt.Sprintf("invalid type: %s, expected a sequence", describe(params[0])))
	}
	if len(keys) > maxMultipleAccounts {
		return nil, invalidParams2(fmt.Sprintf("Too many inputs provided; max %d", maxMultipleAccounts))
	}
	cfg, perr := parseAccountConfig(params, 1)
	if perr != nil {
		return nil, perr
	}
	out := make([]any, len(keys))
	for i, k := range keys {
		if _, perr := verifyBase58(mustJSON(k), 32); perr != nil {
			return nil, perr
		}
		if out[i], perr = n.accountLocked(k, encodingOf(cfg), cfg.DataSlice); perr != nil {
			return nil, perr
		}
	}
	return n.withContext(out), nil
}

func (n *Node) getTokenAccountBalance(params []json.RawMessage) (any, *rpcError) {
	if err := arity(params, 1, 2); err != nil {
		return nil, err
	}
	key, perr := verifyBase58(params[0], 32)
	if perr != nil {
		return nil, perr
	}
	if err := n.contextConfig(params, 2, 1, false); err != nil {
		return nil, err
	}
	if !n.exists(key) {
		return nil, invalidParams2("Invalid param: could not find account")
	}
	ta, ok := n.tokenAccountOf(key)
	if !ok {
		return nil, invalidParams2("Invalid param: not a Token account")
	}
	m, ok := n.mintOf(ta.mint)
	if !ok {
		return nil, invalidParams2("Invalid param: could not find mint")
	}
	return n.withContext(uiTokenAmount(ta.amount, m.decimals)), nil
}

// getTokenAccountsByOwner lists owner's token accounts of a mint or of the
// Token program.
func (n *Node) getTokenAccountsByOwner(params []json.RawMessage) (any, *rpcError) {
	if err := arity(params, 2, 3); err != nil {
		return nil, err
	}
	owner, perr := verifyBase58(params[0], 32)
	if perr != nil {
		return nil, perr
	}
	var filter struct {
		Mint      *string `json:"mint"`
		ProgramID *string `json:"programId"`
	}
	if err := json.Unmarshal(params[1], &filter); err != nil || (filter.Mint == nil) == (filter.ProgramID == nil) {
		return nil, invalidParams("data did not match any variant of untagged enum RpcTokenAccountsFilter")
	}
	if filter.ProgramID != nil && *filter.ProgramID != TokenProgram {
		return nil, invalidParams2("Invalid param: unrecognized Token program id")
	}
	if filter.Mint != nil {
		if _, ok := n.mintOf(*filter.Mint); !ok {
			return nil, invalidParams2("Invalid param: could not find mint")
		}
	}
	cfg, perr := parseAccountConfig(params, 2)
	if perr != nil {
		return nil, perr
	}
	keys := make([]string, 0, len(n.accounts))
	for k := range n.accounts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := []any{}
	for _, k := range keys {
		ta, ok := n.tokenAccountOf(k)
		if !ok || ta.owner != owner || (filter.Mint != nil && ta.mint != *filter.Mint) {
			continue
		}
		a, perr := n.accountLocked(k, encodingOf(cfg), cfg.DataSlice)
		if perr != nil {
			return nil, perr
		}
		out = append(out, map[string]any{"account": a, "pubkey": k})
	}
	return n.withContext(out), nil
}

package solanafake

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mr-tron/base58"

	sol "github.com/gagliardetto/solana-go"
)

// header is a message header as agave's "json" encoding prints it.
type header struct {
	NumReadonlySignedAccounts   int `json:"numReadonlySignedAccounts"`
	NumReadonlyUnsignedAccounts int `json:"numReadonlyUnsignedAccounts"`
	NumRequiredSignatures       int `json:"numRequiredSignatures"`
}

// instruction is a compiled instruction ("json" encoding).
type instruction struct {
	Accounts       []int  `json:"accounts"`
	Data           string `json:"data"` // base58
	ProgramIDIndex int    `json:"programIdIndex"`
	StackHeight    *int   `json:"stackHeight"`
}

// lookup is an address-table lookup of a v0 message.
type lookup struct {
	AccountKey      string `json:"accountKey"`
	ReadonlyIndexes []int  `json:"readonlyIndexes"`
	WritableIndexes []int  `json:"writableIndexes"`
}

// ftx is one stored transaction: its message and the status meta exactly as
// agave's "json" encoding prints it (kept member by member so that the
// reduced "accounts" meta is a subset of the same bytes).
type ftx struct {
	version    int // -1 legacy, else the version number
	signatures []string
	header     header
	keys       []string // static account keys
	blockhash  string   // recentBlockhash
	instrs     []instruction
	lookups    []lookup
	loadedW    []string
	loadedR    []string
	meta       map[string]json.RawMessage
	failed     bool
	slot       uint64
	blockTime  *int64
}

// allKeys is agave's AccountKeys order: static, loaded writable, loaded
// readonly.
func (t *ftx) allKeys() []string {
	out := make([]string, 0, len(t.keys)+len(t.loadedW)+len(t.loadedR))
	out = append(out, t.keys...)
	out = append(out, t.loadedW...)
	return append(out, t.loadedR...)
}

// block is one produced slot.
type block struct {
	slot       uint64
	parentSlot uint64
	height     uint64
	hash       string
	prevHash   string
	time       *int64
	txs        []*ftx
	rewards    json.RawMessage // block rewards as captured, "[]" if generated
}

// capturedTx is a transaction as getBlock/getTransaction print it in the
// "json" encoding (or a binary ["…","base64"] pair).
type capturedTx struct {
	BlockTime   *int64                     `json:"blockTime"`
	Slot        *uint64                    `json:"slot"`
	Meta        map[string]json.RawMessage `json:"meta"`
	Transaction json.RawMessage            `json:"transaction"`
	Version     json.RawMessage            `json:"version"`
}

type capturedMessage struct {
	AccountKeys         []string      `json:"accountKeys"`
	AddressTableLookups []lookup      `json:"addressTableLookups"`
	Header              header        `json:"header"`
	Instructions        []instruction `json:"instructions"`
	RecentBlockhash     string        `json:"recentBlockhash"`
}

// parseTx turns a captured transaction into an ftx.
func parseTx(c capturedTx) (*ftx, error) {
	if c.Meta == nil {
		return nil, errors.New("transaction without meta")
	}
	t := &ftx{version: -1, meta: c.Meta}
	if len(c.Transaction) > 0 && c.Transaction[0] == '[' {
		if err := t.fromBinary(c.Transaction); err != nil {
			return nil, err
		}
	} else {
		var body struct {
			Message    capturedMessage `json:"message"`
			Signatures []string        `json:"signatures"`
		}
		if err := json.Unmarshal(c.Transaction, &body); err != nil {
			return nil, fmt.Errorf("transaction: %w", err)
		}
		m := body.Message
		t.signatures, t.header, t.keys, t.blockhash, t.instrs, t.lookups =
			body.Signatures, m.Header, m.AccountKeys, m.RecentBlockhash, m.Instructions, m.AddressTableLookups
	}
	switch v := string(c.Version); v {
	case "", `"legacy"`:
		if len(t.lookups) > 0 {
			t.version = 0
		}
	case "0":
		t.version = 0
	default:
		return nil, fmt.Errorf("unknown transaction version %s", v)
	}
	if len(t.signatures) == 0 || len(t.keys) == 0 {
		return nil, errors.New("transaction without signatures or account keys")
	}
	if raw, ok := c.Meta["loadedAddresses"]; ok {
		var la struct{ Writable, Readonly []string }
		if err := json.Unmarshal(raw, &la); err != nil {
			return nil, fmt.Errorf("loadedAddresses: %w", err)
		}
		t.loadedW, t.loadedR = la.Writable, la.Readonly
	}
	errRaw, ok := c.Meta["err"]
	if !ok {
		return nil, errors.New("meta without err")
	}
	t.failed = string(errRaw) != "null"
	var pre []uint64
	if err := json.Unmarshal(c.Meta["preBalances"], &pre); err != nil {
		return nil, fmt.Errorf("preBalances: %w", err)
	}
	if len(pre) != len(t.allKeys()) {
		return nil, fmt.Errorf("%d balances for %d account keys", len(pre), len(t.allKeys()))
	}
	if c.Slot != nil {
		t.slot = *c.Slot
	}
	t.blockTime = c.BlockTime
	return t, nil
}

// fromBinary reads a ["<data>","base64"|"base58"] transaction with
// solana-go's wire decoder.
func (t *ftx) fromBinary(raw json.RawMessage) error {
	var pair []string
	if err := json.Unmarshal(raw, &pair); err != nil || len(pair) != 2 {
		return fmt.Errorf("binary transaction is not a [data, encoding] pair")
	}
	var data []byte
	var err error
	switch pair[1] {
	case "base64":
		data, err = base64.StdEncoding.DecodeString(pair[0])
	case "base58":
		data, err = base58.Decode(pair[0])
	default:
		err = fmt.Errorf("encoding %q", pair[1])
	}
	if err != nil {
		return fmt.Errorf("binary transaction: %w", err)
	}
	tx, err := sol.TransactionFromBytes(data)
	if err != nil {
		return fmt.Errorf("binary transaction: %w", err)
	}
	for _, s := range tx.Signatures {
		t.signatures = append(t.signatures, s.String())
	}
	m := tx.Message
	t.header = header{
		NumReadonlySignedAccounts:   int(m.Header.NumReadonlySignedAccounts),
		NumReadonlyUnsignedAccounts: int(m.Header.NumReadonlyUnsignedAccounts),
		NumRequiredSignatures:       int(m.Header.NumRequiredSignatures),
	}
	for _, k := range m.AccountKeys {
		t.keys = append(t.keys, k.String())
	}
	t.blockhash = m.RecentBlockhash.String()
	for _, in := range m.Instructions {
		acc := make([]int, len(in.Accounts))
		for i, a := range in.Accounts {
			acc[i] = int(a)
		}
		t.instrs = append(t.instrs, instruction{Accounts: acc, Data: base58.Encode(in.Data), ProgramIDIndex: int(in.ProgramIDIndex)})
	}
	for _, l := range m.AddressTableLookups {
		t.lookups = append(t.lookups, lookup{AccountKey: l.AccountKey.String(), ReadonlyIndexes: bytesToInts(l.ReadonlyIndexes), WritableIndexes: bytesToInts(l.WritableIndexes)})
	}
	if m.IsVersioned() {
		t.version = 0
	}
	return nil
}

func bytesToInts(b []uint8) []int {
	out := make([]int, len(b))
	for i, v := range b {
		out[i] = int(v)
	}
	return out
}

func intsToBytes(v []int) []uint8 {
	out := make([]uint8, len(v))
	for i, x := range v {
		out[i] = uint8(x)
	}
	return out
}

// wire serializes the transaction in the Solana wire format (solana-go).
func (t *ftx) wire() ([]byte, error) {
	m := sol.Message{
		Header: sol.MessageHeader{
			NumRequiredSignatures:       uint8(t.header.NumRequiredSignatures),
			NumReadonlySignedAccounts:   uint8(t.header.NumReadonlySignedAccounts),
			NumReadonlyUnsignedAccounts: uint8(t.header.NumReadonlyUnsignedAccounts),
		},
	}
	for _, k := range t.keys {
		pk, err := sol.PublicKeyFromBase58(k)
		if err != nil {
			return nil, err
		}
		m.AccountKeys = append(m.AccountKeys, pk)
	}
	h, err := sol.HashFromBase58(t.blockhash)
	if err != nil {
		return nil, err
	}
	m.RecentBlockhash = h
	for _, in := range t.instrs {
		data, err := base58.Decode(in.Data)
		if err != nil {
			return nil, err
		}
		acc := make([]uint16, len(in.Accounts))
		for i, a := range in.Accounts {
			acc[i] = uint16(a)
		}
		m.Instructions = append(m.Instructions, sol.CompiledInstruction{ProgramIDIndex: uint16(in.ProgramIDIndex), Accounts: acc, Data: data})
	}
	if t.version >= 0 {
		m.SetVersion(sol.MessageVersionV0)
		lookups := []sol.MessageAddressTableLookup{}
		for _, l := range t.lookups {
			pk, err := sol.PublicKeyFromBase58(l.AccountKey)
			if err != nil {
				return nil, err
			}
			lookups = append(lookups, sol.MessageAddressTableLookup{AccountKey: pk, WritableIndexes: intsToBytes(l.WritableIndexes), ReadonlyIndexes: intsToBytes(l.ReadonlyIndexes)})
		}
		m.SetAddressTableLookups(lookups)
	}
	tx := sol.Transaction{Message: m}
	for _, s := range t.signatures {
		sig, err := sol.SignatureFromBase58(s)
		if err != nil {
			return nil, err
		}
		tx.Signatures = append(tx.Signatures, sig)
	}
	return tx.MarshalBinary()
}

// reserved are keys agave never reports writable (sysvars and builtin
// programs; a subset of ReservedAccountKeys, enough for the fake's traffic).
var reserved = map[string]bool{
	"11111111111111111111111111111111":            true,
	"Vote111111111111111111111111111111111111111": true,
	"Stake11111111111111111111111111111111111111": true,
	"ComputeBudget111111111111111111111111111111": true,
	"AddressLookupTab1e1111111111111111111111111": true,
	"SysvarC1ock11111111111111111111111111111111": true,
	"SysvarS1otHashes111111111111111111111111111": true,
	"SysvarRent111111111111111111111111111111111": true,
	"SysvarRecentB1ockHashes11111111111111111111": true,
	"SysvarStakeHistory1111111111111111111111111": true,
	"Sysvar1nstructions1111111111111111111111111": true,
}

// accountList is transactionDetails "accounts": agave's
// parse_legacy_message_accounts / parse_v0_message_accounts, i.e. every key
// of AccountKeys (lookup-table keys included, "source":"lookupTable") with
// its signer and writable flags.
func (t *ftx) accountList() []map[string]any {
	all := t.allKeys()
	out := make([]map[string]any, len(all))
	nStatic := len(t.keys)
	h := t.header
	for i, k := range all {
		signer := i < h.NumRequiredSignatures
		var writable bool
		source := "transaction"
		switch {
		case i >= nStatic:
			source = "lookupTable"
			writable = i < nStatic+len(t.loadedW)
		case signer:
			writable = i < h.NumRequiredSignatures-h.NumReadonlySignedAccounts
		default:
			writable = i < nStatic-h.NumReadonlyUnsignedAccounts
		}
		if reserved[k] {
			writable = false
		}
		out[i] = map[string]any{"pubkey": k, "signer": signer, "source": source, "writable": writable}
	}
	return out
}

// jsonMessage is the "json" encoding of the message (UiRawMessage); v0
// messages carry addressTableLookups, legacy ones do not.
func (t *ftx) jsonMessage() map[string]any {
	m := map[string]any{
		"accountKeys":     t.keys,
		"header":          t.header,
		"instructions":    t.instrs,
		"recentBlockhash": t.blockhash,
	}
	if t.version >= 0 {
		lookups := t.lookups
		if lookups == nil {
			lookups = []lookup{}
		}
		m["addressTableLookups"] = lookups
	}
	return m
}

// accountsMetaKeys are the meta members agave keeps in "accounts" mode
// (build_simple_ui_transaction_status_meta); rewards only when asked.
var accountsMetaKeys = []string{"err", "fee", "postBalances", "postTokenBalances", "preBalances", "preTokenBalances", "status"}

// encodeOpts are the rendering options of getBlock/getTransaction.
type encodeOpts struct {
	encoding    string // json, jsonParsed, base64, base58, binary
	details     string // full, accounts, signatures, none
	rewards     bool
	maxVersion  *int
	transaction bool // getTransaction (no "accounts" details)
}

// errUnsupportedVersion is returned by render for a version above
// maxSupportedTransactionVersion (or any v0 when it is absent).
type errUnsupportedVersion int

func (e errUnsupportedVersion) Error() string {
	return fmt.Sprintf("Transaction version (%d) is not supported by the requesting client. "+
		"Please try the request again with the following configuration parameter: \"maxSupportedTransactionVersion\": %d", int(e), int(e))
}

// checkVersion is agave's validate_version: the "version" member to print
// (nil: omitted) or the -32015 error.
func (t *ftx) checkVersion(o encodeOpts) (any, error) {
	switch {
	case o.maxVersion == nil && t.version < 0:
		return nil, nil
	case o.maxVersion == nil:
		return nil, errUnsupportedVersion(t.version)
	case t.version < 0:
		return "legacy", nil
	case t.version > *o.maxVersion:
		return nil, errUnsupportedVersion(t.version)
	}
	return t.version, nil
}

// render prints the transaction with its meta as getBlock's transactions[i].
func (t *ftx) render(o encodeOpts) (map[string]any, error) {
	version, err := t.checkVersion(o)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	if version != nil {
		out["version"] = version
	}
	if o.details == "accounts" {
		meta := map[string]json.RawMessage{}
		for _, k := range accountsMetaKeys {
			if v, ok := t.meta[k]; ok {
				meta[k] = v
			}
		}
		if o.rewards {
			if v, ok := t.meta["rewards"]; ok {
				meta["rewards"] = v
			} else {
				meta["rewards"] = json.RawMessage("null")
			}
		}
		out["meta"] = meta
		out["transaction"] = map[string]any{"accountKeys": t.accountList(), "signatures": t.signatures}
		return out, nil
	}
	out["meta"] = t.meta
	switch o.encoding {
	case "json":
		out["transaction"] = map[string]any{"message": t.jsonMessage(), "signatures": t.signatures}
	case "base64", "base58", "binary":
		wire, err := t.wire()
		if err != nil {
			return nil, fmt.Errorf("serializing %s: %w", t.signatures[0], err)
		}
		switch o.encoding {
		case "base64":
			out["transaction"] = []string{base64.StdEncoding.EncodeToString(wire), "base64"}
		case "base58":
			out["transaction"] = []string{base58.Encode(wire), "base58"}
		default: // legacy "binary": a bare base58 string
			out["transaction"] = base58.Encode(wire)
		}
	case "jsonParsed":
		out["transaction"] = t.parsedTransaction()
		out["meta"] = t.parsedMeta()
	}
	return out, nil
}

package tronfake

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The wallet endpoints (wallet.go) take transactions in both of java-tron's
// forms: the JSON a wallet posts to broadcasttransaction, which the node
// packs back into protobuf field by field (Util.packTransaction: the posted
// raw_data_hex and txID are ignored), and the protobuf bytes of
// broadcasthex. rawData is protocol.Transaction.raw with every field a
// payment can carry; its marshal is the canonical protobuf encoding (fields
// in number order, proto3 zero values omitted), which is what java-tron
// hashes into the txID and what TronWeb rebuilds to check a transaction the
// node built.

// Contract types the simulated node executes (protocol.Transaction.Contract.ContractType).
var contractTypeNumbers = map[string]int{
	"TransferContract":     ctTransfer,
	"TriggerSmartContract": ctTrigger,
}

// txContract is protocol.Transaction.Contract.
type txContract struct {
	ctype        int    // 1
	typeURL      string // 2: Any.type_url
	value        []byte // 2: Any.value, the encoded contract message
	provider     []byte // 3
	name         []byte // 4: ContractName
	permissionID int64  // 5: Permission_id
}

// typeName is the contract type's enum name, or its number for a type the
// fake does not know.
func (c *txContract) typeName() string {
	for name, n := range contractTypeNumbers {
		if n == c.ctype {
			return name
		}
	}
	return fmt.Sprint(c.ctype)
}

// rawData is protocol.Transaction.raw.
type rawData struct {
	refBlockBytes []byte // 1
	refBlockNum   int64  // 3
	refBlockHash  []byte // 4
	expiration    int64  // 8
	data          []byte // 10: the memo
	contracts     []txContract
	scripts       []byte // 12
	timestamp     int64  // 14
	feeLimit      int64  // 18
}

func (r *rawData) marshal() []byte {
	var b []byte
	b = appendBytes(b, 1, r.refBlockBytes)
	b = appendInt(b, 3, r.refBlockNum)
	b = appendBytes(b, 4, r.refBlockHash)
	b = appendInt(b, 8, r.expiration)
	b = appendBytes(b, 10, r.data)
	for _, c := range r.contracts {
		var any []byte
		any = appendBytes(any, 1, []byte(c.typeURL))
		any = appendBytes(any, 2, c.value)
		var cb []byte
		cb = appendInt(cb, 1, int64(c.ctype))
		cb = appendMessage(cb, 2, any)
		cb = appendBytes(cb, 3, c.provider)
		cb = appendBytes(cb, 4, c.name)
		cb = appendInt(cb, 5, c.permissionID)
		b = appendMessage(b, 11, cb)
	}
	b = appendBytes(b, 12, r.scripts)
	b = appendInt(b, 14, r.timestamp)
	b = appendInt(b, 18, r.feeLimit)
	return b
}

// appendMessage appends an embedded message; unlike appendBytes it keeps an
// empty one (a set message field is encoded even when all its fields are
// zero, as protobuf-java does for Any and Contract).
func appendMessage(b []byte, field int, v []byte) []byte {
	b = appendVarint(appendKey(b, field, 2), uint64(len(v)))
	return append(b, v...)
}

// marshalTx encodes protocol.Transaction {raw_data = 1, signature = 2}.
func marshalTx(raw []byte, sigs [][]byte) []byte {
	b := appendMessage(nil, 1, raw)
	for _, s := range sigs {
		b = appendMessage(b, 2, s)
	}
	return b
}

// transferValue is protocol.TransferContract.
type transferValue struct {
	owner, to []byte
	amount    int64
}

func (v transferValue) marshal() []byte {
	var b []byte
	b = appendBytes(b, 1, v.owner)
	b = appendBytes(b, 2, v.to)
	return appendInt(b, 3, v.amount)
}

// triggerValue is protocol.TriggerSmartContract.
type triggerValue struct {
	owner, contract []byte
	callValue       int64
	data            []byte
	callTokenValue  int64
	tokenID         int64
}

func (v triggerValue) marshal() []byte {
	var b []byte
	b = appendBytes(b, 1, v.owner)
	b = appendBytes(b, 2, v.contract)
	b = appendInt(b, 3, v.callValue)
	b = appendBytes(b, 4, v.data)
	b = appendInt(b, 5, v.callTokenValue)
	return appendInt(b, 6, v.tokenID)
}

// pbField is one decoded protobuf field: a varint or a length-delimited value.
type pbField struct {
	num    int
	varint uint64
	bytes  []byte
	wire   int
}

var errProto = errors.New("Protocol message contained an invalid tag (zero).")

// decodeFields splits a protobuf message into its fields (varint, 64-bit,
// length-delimited, 32-bit). It is what protobuf-java's parser accepts.
func decodeFields(b []byte) ([]pbField, error) {
	var out []pbField
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("While parsing a protocol message, the input ended unexpectedly in the middle of a field.  This could mean either that the input has been truncated or that an embedded message misreported its own length.")
		}
		b = b[n:]
		f := pbField{num: int(key >> 3), wire: int(key & 7)}
		if f.num == 0 {
			return nil, errProto
		}
		switch f.wire {
		case 0:
			v, n := binary.Uvarint(b)
			if n <= 0 {
				return nil, errors.New("While parsing a protocol message, the input ended unexpectedly in the middle of a field.  This could mean either that the input has been truncated or that an embedded message misreported its own length.")
			}
			f.varint, b = v, b[n:]
		case 1:
			if len(b) < 8 {
				return nil, errors.New("While parsing a protocol message, the input ended unexpectedly in the middle of a field.  This could mean either that the input has been truncated or that an embedded message misreported its own length.")
			}
			f.varint, b = binary.LittleEndian.Uint64(b), b[8:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return nil, errors.New("While parsing a protocol message, the input ended unexpectedly in the middle of a field.  This could mean either that the input has been truncated or that an embedded message misreported its own length.")
			}
			f.bytes, b = b[n:n+int(l)], b[n+int(l):]
		case 5:
			if len(b) < 4 {
				return nil, errors.New("While parsing a protocol message, the input ended unexpectedly in the middle of a field.  This could mean either that the input has been truncated or that an embedded message misreported its own length.")
			}
			f.varint, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		default:
			return nil, errors.New("Protocol message tag had invalid wire type.")
		}
		out = append(out, f)
	}
	return out, nil
}

// unmarshalTx decodes protocol.Transaction into its raw_data bytes (as
// given) and signatures.
func unmarshalTx(b []byte) (raw []byte, sigs [][]byte, err error) {
	fields, err := decodeFields(b)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range fields {
		switch {
		case f.num == 1 && f.wire == 2:
			raw = f.bytes
		case f.num == 2 && f.wire == 2:
			sigs = append(sigs, f.bytes)
		}
	}
	return raw, sigs, nil
}

// unmarshalRaw decodes protocol.Transaction.raw.
func unmarshalRaw(b []byte) (*rawData, error) {
	fields, err := decodeFields(b)
	if err != nil {
		return nil, err
	}
	r := &rawData{}
	for _, f := range fields {
		switch f.num {
		case 1:
			r.refBlockBytes = f.bytes
		case 3:
			r.refBlockNum = int64(f.varint)
		case 4:
			r.refBlockHash = f.bytes
		case 8:
			r.expiration = int64(f.varint)
		case 10:
			r.data = f.bytes
		case 11:
			c, err := unmarshalContract(f.bytes)
			if err != nil {
				return nil, err
			}
			r.contracts = append(r.contracts, c)
		case 12:
			r.scripts = f.bytes
		case 14:
			r.timestamp = int64(f.varint)
		case 18:
			r.feeLimit = int64(f.varint)
		}
	}
	return r, nil
}

func unmarshalContract(b []byte) (txContract, error) {
	var c txContract
	fields, err := decodeFields(b)
	if err != nil {
		return c, err
	}
	for _, f := range fields {
		switch f.num {
		case 1:
			c.ctype = int(f.varint)
		case 2:
			any, err := decodeFields(f.bytes)
			if err != nil {
				return c, err
			}
			for _, a := range any {
				switch a.num {
				case 1:
					c.typeURL = string(a.bytes)
				case 2:
					c.value = a.bytes
				}
			}
		case 3:
			c.provider = f.bytes
		case 4:
			c.name = f.bytes
		case 5:
			c.permissionID = int64(f.varint)
		}
	}
	return c, nil
}

func unmarshalTransfer(b []byte) (transferValue, error) {
	var v transferValue
	fields, err := decodeFields(b)
	if err != nil {
		return v, err
	}
	for _, f := range fields {
		switch f.num {
		case 1:
			v.owner = f.bytes
		case 2:
			v.to = f.bytes
		case 3:
			v.amount = int64(f.varint)
		}
	}
	return v, nil
}

func unmarshalTrigger(b []byte) (triggerValue, error) {
	var v triggerValue
	fields, err := decodeFields(b)
	if err != nil {
		return v, err
	}
	for _, f := range fields {
		switch f.num {
		case 1:
			v.owner = f.bytes
		case 2:
			v.contract = f.bytes
		case 3:
			v.callValue = int64(f.varint)
		case 4:
			v.data = f.bytes
		case 5:
			v.callTokenValue = int64(f.varint)
		case 6:
			v.tokenID = int64(f.varint)
		}
	}
	return v, nil
}

// jsonParseError is JsonFormat's ParseException, which packTransaction
// swallows (the contract is dropped) and the create servlets report.
type jsonParseError struct{ msg string }

func (e jsonParseError) Error() string { return e.msg }

// fromHexString is java-tron's ByteArray.fromHexString: an optional 0x, and
// an odd length padded with a leading zero.
func fromHexString(s string) ([]byte, error) {
	s = strings.TrimPrefix(s, "0x")
	if len(s)%2 == 1 {
		s = "0" + s
	}
	return hex.DecodeString(s)
}

// jsonFields reads a JSON object's members, keeping numbers exact.
func jsonFields(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, jsonParseError{"Expected \"{\"."}
	}
	return m, nil
}

// jsonBytes merges a bytes field the way JsonFormat does with visible=false:
// a hex string.
func jsonBytes(m map[string]json.RawMessage, key string) ([]byte, error) {
	v, ok := m[key]
	if !ok || string(v) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, jsonParseError{fmt.Sprintf("Expected string for %s.", key)}
	}
	b, err := fromHexString(s)
	if err != nil {
		return nil, jsonParseError{"INVALID hex String"}
	}
	return b, nil
}

// jsonInt merges an int64 field: a JSON integer.
func jsonInt(m map[string]json.RawMessage, key string) (int64, error) {
	v, ok := m[key]
	if !ok || string(v) == "null" {
		return 0, nil
	}
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil {
		return 0, jsonParseError{fmt.Sprintf("Expected integer for %s.", key)}
	}
	i, err := n.Int64()
	if err != nil {
		return 0, jsonParseError{fmt.Sprintf("Couldn't parse integer: For input string: %q", n.String())}
	}
	return i, nil
}

func jsonString(m map[string]json.RawMessage, key string) string {
	var s string
	_ = json.Unmarshal(m[key], &s)
	return s
}

// transferFromJSON merges a TransferContract value object.
func transferFromJSON(raw json.RawMessage) (transferValue, error) {
	var v transferValue
	m, err := jsonFields(raw)
	if err != nil {
		return v, err
	}
	if v.owner, err = jsonBytes(m, "owner_address"); err != nil {
		return v, err
	}
	if v.to, err = jsonBytes(m, "to_address"); err != nil {
		return v, err
	}
	v.amount, err = jsonInt(m, "amount")
	return v, err
}

// triggerFromJSON merges a TriggerSmartContract value object.
func triggerFromJSON(raw json.RawMessage) (triggerValue, error) {
	var v triggerValue
	m, err := jsonFields(raw)
	if err != nil {
		return v, err
	}
	if v.owner, err = jsonBytes(m, "owner_address"); err != nil {
		return v, err
	}
	if v.contract, err = jsonBytes(m, "contract_address"); err != nil {
		return v, err
	}
	if v.data, err = jsonBytes(m, "data"); err != nil {
		return v, err
	}
	if v.callValue, err = jsonInt(m, "call_value"); err != nil {
		return v, err
	}
	if v.callTokenValue, err = jsonInt(m, "call_token_value"); err != nil {
		return v, err
	}
	v.tokenID, err = jsonInt(m, "token_id")
	return v, err
}

// packedTx is a transaction a wallet posted, as the node rebuilt it.
type packedTx struct {
	raw  *rawData
	sigs [][]byte
	// skipped names contract types the fake does not execute (java-tron
	// would pack them; the fake refuses them rather than misjudge them).
	skipped []string
}

// packTransaction is Util.packTransaction for visible=false: raw_data and
// signature are read from the JSON, each contract's value object is merged
// into its contract message (a value that does not parse drops the
// contract, as java-tron does), and everything else (txID, raw_data_hex,
// ret, visible) is ignored. A body without raw_data is java-tron's
// NullPointerException.
func packTransaction(body string) (*packedTx, error) {
	var top map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil || top == nil {
		return nil, javaError{"com.alibaba.fastjson.JSONException", "syntax error, " + fastjsonPos(body)}
	}
	if string(top["visible"]) == "true" {
		return nil, javaError{"tronfake", "visible=true is not implemented by the fake; use hex addresses (TronWeb's default)"}
	}
	rawJSON, ok := top["raw_data"]
	if !ok || string(rawJSON) == "null" {
		return nil, javaError{"java.lang.NullPointerException", "null"}
	}
	m, err := jsonFields(rawJSON)
	if err != nil {
		return nil, javaError{"java.lang.ClassCastException", "com.alibaba.fastjson.JSONArray cannot be cast to com.alibaba.fastjson.JSONObject"}
	}
	p := &packedTx{raw: &rawData{}}
	r := p.raw
	var perr error
	set := func(err error) {
		if perr == nil && err != nil {
			perr = err
		}
	}
	var e error
	r.refBlockBytes, e = jsonBytes(m, "ref_block_bytes")
	set(e)
	r.refBlockNum, e = jsonInt(m, "ref_block_num")
	set(e)
	r.refBlockHash, e = jsonBytes(m, "ref_block_hash")
	set(e)
	r.expiration, e = jsonInt(m, "expiration")
	set(e)
	r.data, e = jsonBytes(m, "data")
	set(e)
	r.scripts, e = jsonBytes(m, "scripts")
	set(e)
	r.timestamp, e = jsonInt(m, "timestamp")
	set(e)
	r.feeLimit, e = jsonInt(m, "fee_limit")
	set(e)
	if perr != nil {
		// JsonFormat.merge of the whole transaction failed: packTransaction
		// returns null and the servlet dereferences it.
		return nil, javaError{"java.lang.NullPointerException", "null"}
	}
	var contracts []json.RawMessage
	if c, ok := m["contract"]; ok {
		if err := json.Unmarshal(c, &contracts); err != nil {
			return nil, javaError{"java.lang.ClassCastException", "com.alibaba.fastjson.JSONObject cannot be cast to com.alibaba.fastjson.JSONArray"}
		}
	}
	for _, cj := range contracts {
		cm, err := jsonFields(cj)
		if err != nil {
			continue
		}
		name := jsonString(cm, "type")
		if name == "" {
			continue
		}
		ctype, known := contractTypeNumbers[name]
		if !known {
			p.skipped = append(p.skipped, name)
			continue
		}
		pm, err := jsonFields(cm["parameter"])
		if err != nil {
			continue
		}
		c := txContract{ctype: ctype, typeURL: jsonString(pm, "type_url")}
		var verr error
		switch ctype {
		case ctTransfer:
			var v transferValue
			v, verr = transferFromJSON(pm["value"])
			c.value = v.marshal()
		case ctTrigger:
			var v triggerValue
			v, verr = triggerFromJSON(pm["value"])
			c.value = v.marshal()
		}
		if verr != nil {
			continue // packTransaction logs the ParseException and drops the contract
		}
		if c.permissionID, err = jsonInt(cm, "Permission_id"); err != nil {
			continue
		}
		r.contracts = append(r.contracts, c)
	}
	if s, ok := top["signature"]; ok && string(s) != "null" {
		var sigs []string
		if err := json.Unmarshal(s, &sigs); err != nil {
			return nil, javaError{"java.lang.NullPointerException", "null"}
		}
		for _, h := range sigs {
			b, err := fromHexString(h)
			if err != nil {
				return nil, javaError{"java.lang.NullPointerException", "null"}
			}
			p.sigs = append(p.sigs, b)
		}
	}
	return p, nil
}

// contractJSON prints a contract's value object as JsonFormat does with
// visible=false: hex bytes, proto3 zero values omitted.
func contractJSON(c txContract) (map[string]any, error) {
	out := map[string]any{}
	putBytes := func(k string, b []byte) {
		if len(b) > 0 {
			out[k] = hex.EncodeToString(b)
		}
	}
	putInt := func(k string, v int64) {
		if v != 0 {
			out[k] = v
		}
	}
	switch c.ctype {
	case ctTransfer:
		v, err := unmarshalTransfer(c.value)
		if err != nil {
			return nil, err
		}
		putBytes("owner_address", v.owner)
		putBytes("to_address", v.to)
		putInt("amount", v.amount)
	case ctTrigger:
		v, err := unmarshalTrigger(c.value)
		if err != nil {
			return nil, err
		}
		putBytes("owner_address", v.owner)
		putBytes("contract_address", v.contract)
		putInt("call_value", v.callValue)
		putBytes("data", v.data)
		putInt("call_token_value", v.callTokenValue)
		putInt("token_id", v.tokenID)
	default:
		return nil, fmt.Errorf("contract type %d", c.ctype)
	}
	return out, nil
}

// rawJSON prints raw_data as Util.printTransactionToJSON does.
func (r *rawData) json() (map[string]any, error) {
	contracts := make([]map[string]any, 0, len(r.contracts))
	for _, c := range r.contracts {
		v, err := contractJSON(c)
		if err != nil {
			return nil, err
		}
		jc := map[string]any{
			"parameter": map[string]any{"value": v, "type_url": c.typeURL},
			"type":      c.typeName(),
		}
		if c.permissionID > 0 {
			jc["Permission_id"] = c.permissionID
		}
		contracts = append(contracts, jc)
	}
	out := map[string]any{"contract": contracts}
	putBytes := func(k string, b []byte) {
		if len(b) > 0 {
			out[k] = hex.EncodeToString(b)
		}
	}
	putInt := func(k string, v int64) {
		if v != 0 {
			out[k] = v
		}
	}
	putBytes("ref_block_bytes", r.refBlockBytes)
	putInt("ref_block_num", r.refBlockNum)
	putBytes("ref_block_hash", r.refBlockHash)
	putInt("expiration", r.expiration)
	putBytes("data", r.data)
	putBytes("scripts", r.scripts)
	putInt("timestamp", r.timestamp)
	putInt("fee_limit", r.feeLimit)
	return out, nil
}

// rawJSONVisible prints protocol.Transaction with JsonFormat.printToString
// (visible=true, no contract unpacking), as broadcasthex returns it: the
// Any's value stays hex.
func rawJSONVisible(r *rawData, sigs [][]byte) string {
	var b strings.Builder
	b.WriteString(`{"raw_data":{`)
	first := true
	field := func(k, v string) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		fmt.Fprintf(&b, "%q:%s", k, v)
	}
	str := func(s string) string { return string(mustJSON(s)) }
	if len(r.refBlockBytes) > 0 {
		field("ref_block_bytes", str(hex.EncodeToString(r.refBlockBytes)))
	}
	if r.refBlockNum != 0 {
		field("ref_block_num", fmt.Sprint(r.refBlockNum))
	}
	if len(r.refBlockHash) > 0 {
		field("ref_block_hash", str(hex.EncodeToString(r.refBlockHash)))
	}
	if r.expiration != 0 {
		field("expiration", fmt.Sprint(r.expiration))
	}
	if len(r.data) > 0 {
		field("data", str(hex.EncodeToString(r.data)))
	}
	if len(r.contracts) > 0 {
		var cs []string
		for _, c := range r.contracts {
			s := fmt.Sprintf(`{"type":%q,"parameter":{"type_url":%s,"value":%q}`, c.typeName(), str(c.typeURL), hex.EncodeToString(c.value))
			if c.permissionID != 0 {
				s += fmt.Sprintf(`,"Permission_id":%d`, c.permissionID)
			}
			cs = append(cs, s+"}")
		}
		field("contract", "["+strings.Join(cs, ",")+"]")
	}
	if r.timestamp != 0 {
		field("timestamp", fmt.Sprint(r.timestamp))
	}
	if r.feeLimit != 0 {
		field("fee_limit", fmt.Sprint(r.feeLimit))
	}
	b.WriteString("}")
	if len(sigs) > 0 {
		var ss []string
		for _, s := range sigs {
			ss = append(ss, fmt.Sprintf("%q", hex.EncodeToString(s)))
		}
		b.WriteString(`,"signature":[` + strings.Join(ss, ",") + "]")
	}
	b.WriteString("}")
	return b.String()
}

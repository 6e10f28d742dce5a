package solanafake

import (
	"encoding/binary"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/mr-tron/base58"
)

// The "jsonParsed" encoding of getTransaction and getBlock: agave's
// transaction-status parsers (parse_system.rs, parse_token.rs,
// parse_associated_token.rs, parse_instruction.rs) for the instructions
// the fake's transactions carry. An instruction of another program, or one
// these parsers do not cover, is printed partially decoded (programId,
// accounts, base58 data), which is also what agave does with what it
// cannot parse.

// innerJSON is one entry of meta.innerInstructions in the "json" encoding.
type innerJSON struct {
	Index        int           `json:"index"`
	Instructions []instruction `json:"instructions"`
}

// parsedTransaction is UiTransaction with a UiParsedMessage.
func (t *ftx) parsedTransaction() map[string]any {
	keys := t.allKeys()
	instrs := make([]any, len(t.instrs))
	for i, in := range t.instrs {
		instrs[i] = parseInstruction(keys, in)
	}
	msg := map[string]any{
		"accountKeys":     t.accountList(),
		"instructions":    instrs,
		"recentBlockhash": t.blockhash,
	}
	if t.version >= 0 {
		lookups := t.lookups
		if lookups == nil {
			lookups = []lookup{}
		}
		msg["addressTableLookups"] = lookups
	}
	return map[string]any{"message": msg, "signatures": t.signatures}
}

// parsedMeta is the status meta of jsonParsed: inner instructions parsed,
// loadedAddresses left out (the keys carry their source instead).
func (t *ftx) parsedMeta() map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(t.meta))
	for k, v := range t.meta {
		if k != "loadedAddresses" {
			out[k] = v
		}
	}
	if raw, ok := t.meta["innerInstructions"]; ok && string(raw) != "null" {
		var groups []innerJSON
		if json.Unmarshal(raw, &groups) == nil {
			parsed := make([]any, len(groups))
			for i, g := range groups {
				parsed[i] = parsedInner(t, g)
			}
			out["innerInstructions"] = mustJSON(parsed)
		}
	}
	return out
}

func parsedInner(t *ftx, g innerJSON) map[string]any {
	keys := t.allKeys()
	list := make([]any, len(g.Instructions))
	for i, in := range g.Instructions {
		list[i] = parseInstruction(keys, in)
	}
	return map[string]any{"index": g.Index, "instructions": list}
}

// parseInstruction is parse_ui_instruction: parsed when the program is
// known and the data parses, partially decoded otherwise.
func parseInstruction(keys []string, in instruction) map[string]any {
	var stack any
	if in.StackHeight != nil {
		stack = *in.StackHeight
	}
	if in.ProgramIDIndex >= len(keys) {
		return map[string]any{"accounts": []string{}, "data": in.Data, "programId": "", "stackHeight": stack}
	}
	prog := keys[in.ProgramIDIndex]
	accounts := make([]string, 0, len(in.Accounts))
	for _, a := range in.Accounts {
		if a < len(keys) {
			accounts = append(accounts, keys[a])
		}
	}
	data, _ := base58.Decode(in.Data)
	var name, typ string
	var info any
	ok := false
	switch prog {
	case SystemProgram:
		name = "system"
		typ, info, ok = parseSystem(data, accounts)
	case TokenProgram:
		name = "spl-token"
		typ, info, ok = parseToken(data, accounts)
	case AssociatedTokenProgram:
		name = "spl-associated-token-account"
		typ, info, ok = parseATA(data, accounts)
	case MemoProgram:
		if utf8.Valid(data) {
			return map[string]any{"parsed": string(data), "program": "spl-memo", "programId": prog, "stackHeight": stack}
		}
	}
	if !ok {
		return map[string]any{"accounts": accounts, "data": in.Data, "programId": prog, "stackHeight": stack}
	}
	return map[string]any{"parsed": map[string]any{"info": info, "type": typ}, "program": name, "programId": prog, "stackHeight": stack}
}

// parseSystem parses a System instruction (bincode: u32 discriminant).
func parseSystem(d []byte, acc []string) (string, any, bool) {
	if len(d) < 4 {
		return "", nil, false
	}
	switch binary.LittleEndian.Uint32(d) {
	case 0:
		if len(d) < 52 || len(acc) < 2 {
			return "", nil, false
		}
		return "createAccount", map[string]any{
			"source": acc[0], "newAccount": acc[1],
			"lamports": binary.LittleEndian.Uint64(d[4:]), "space": binary.LittleEndian.Uint64(d[12:]),
			"owner": base58.Encode(d[20:52]),
		}, true
	case 1:
		if len(d) < 36 || len(acc) < 1 {
			return "", nil, false
		}
		return "assign", map[string]any{"account": acc[0], "owner": base58.Encode(d[4:36])}, true
	case 2:
		if len(d) < 12 || len(acc) < 2 {
			return "", nil, false
		}
		return "transfer", map[string]any{"source": acc[0], "destination": acc[1], "lamports": binary.LittleEndian.Uint64(d[4:])}, true
	case 8:
		if len(d) < 12 || len(acc) < 1 {
			return "", nil, false
		}
		return "allocate", map[string]any{"account": acc[0], "space": binary.LittleEndian.Uint64(d[4:])}, true
	}
	return "", nil, false
}

// signers is parse_signers: one authority, or a multisig and its signers
// when more accounts follow.
func signers(info map[string]any, last int, acc []string, single, multi string) {
	if len(acc) > last+1 {
		info[multi] = acc[last]
		info["signers"] = acc[last+1:]
		return
	}
	info[single] = acc[last]
}

// parseToken parses the Token program instructions the fake's
// transactions carry.
func parseToken(d []byte, acc []string) (string, any, bool) {
	if len(d) == 0 {
		return "", nil, false
	}
	amount := func() uint64 { return binary.LittleEndian.Uint64(d[1:9]) }
	switch d[0] {
	case 3: // Transfer
		if len(d) < 9 || len(acc) < 3 {
			return "", nil, false
		}
		info := map[string]any{"source": acc[0], "destination": acc[1], "amount": strconv.FormatUint(amount(), 10)}
		signers(info, 2, acc, "authority", "multisigAuthority")
		return "transfer", info, true
	case 4: // Approve
		if len(d) < 9 || len(acc) < 3 {
			return "", nil, false
		}
		info := map[string]any{"source": acc[0], "delegate": acc[1], "amount": strconv.FormatUint(amount(), 10)}
		signers(info, 2, acc, "owner", "multisigOwner")
		return "approve", info, true
	case 7: // MintTo
		if len(d) < 9 || len(acc) < 3 {
			return "", nil, false
		}
		info := map[string]any{"mint": acc[0], "account": acc[1], "amount": strconv.FormatUint(amount(), 10)}
		signers(info, 2, acc, "mintAuthority", "multisigMintAuthority")
		return "mintTo", info, true
	case 8: // Burn
		if len(d) < 9 || len(acc) < 3 {
			return "", nil, false
		}
		info := map[string]any{"account": acc[0], "mint": acc[1], "amount": strconv.FormatUint(amount(), 10)}
		signers(info, 2, acc, "authority", "multisigAuthority")
		return "burn", info, true
	case 12: // TransferChecked
		if len(d) < 10 || len(acc) < 4 {
			return "", nil, false
		}
		info := map[string]any{"source": acc[0], "mint": acc[1], "destination": acc[2], "tokenAmount": uiTokenAmount(amount(), d[9])}
		signers(info, 3, acc, "authority", "multisigAuthority")
		return "transferChecked", info, true
	case 18: // InitializeAccount3
		if len(d) < 33 || len(acc) < 2 {
			return "", nil, false
		}
		return "initializeAccount3", map[string]any{"account": acc[0], "mint": acc[1], "owner": base58.Encode(d[1:33])}, true
	case 21: // GetAccountDataSize
		if len(acc) < 1 || len(d)%2 != 1 {
			return "", nil, false
		}
		info := map[string]any{"mint": acc[0]}
		var types []string
		for i := 1; i+1 < len(d); i += 2 {
			switch binary.LittleEndian.Uint16(d[i:]) {
			case 7:
				types = append(types, "immutableOwner")
			default:
				return "", nil, false
			}
		}
		if len(types) > 0 {
			info["extensionTypes"] = types
		}
		return "getAccountDataSize", info, true
	case 22: // InitializeImmutableOwner
		if len(acc) < 1 {
			return "", nil, false
		}
		return "initializeImmutableOwner", map[string]any{"account": acc[0]}, true
	}
	return "", nil, false
}

// parseATA parses the Associated Token Account program's Create and
// CreateIdempotent.
func parseATA(d []byte, acc []string) (string, any, bool) {
	typ := ""
	switch {
	case len(d) == 0 || (len(d) == 1 && d[0] == 0):
		typ = "create"
	case len(d) == 1 && d[0] == 1:
		typ = "createIdempotent"
	default:
		return "", nil, false
	}
	if len(acc) < 6 {
		return "", nil, false
	}
	return typ, map[string]any{
		"source": acc[0], "account": acc[1], "wallet": acc[2], "mint": acc[3],
		"systemProgram": acc[4], "tokenProgram": acc[5],
	}, true
}

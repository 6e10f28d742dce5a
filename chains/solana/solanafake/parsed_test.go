package solanafake

import (
	"encoding/binary"
	"encoding/json"
	"net/http/httptest"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/mr-tron/base58"
)

// compile turns a parsed instruction of the capture back into the compiled
// instruction agave parsed it from (keys gets every account it names).
func compile(t *testing.T, keys *[]string, parsed map[string]any) instruction {
	t.Helper()
	idx := func(k any) int {
		for i, x := range *keys {
			if x == k {
				return i
			}
		}
		*keys = append(*keys, k.(string))
		return len(*keys) - 1
	}
	p := parsed["parsed"].(map[string]any)
	info := p["info"].(map[string]any)
	u64 := func(v any) []byte {
		b := make([]byte, 8)
		switch x := v.(type) {
		case float64:
			binary.LittleEndian.PutUint64(b, uint64(x))
		case string:
			n, err := strconv.ParseUint(x, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			binary.LittleEndian.PutUint64(b, n)
		}
		return b
	}
	in := instruction{ProgramIDIndex: idx(parsed["programId"])}
	var data []byte
	switch p["type"] {
	case "transfer": // system
		data = append([]byte{2, 0, 0, 0}, u64(info["lamports"])...)
		in.Accounts = []int{idx(info["source"]), idx(info["destination"])}
	case "approve":
		data = append([]byte{4}, u64(info["amount"])...)
		in.Accounts = []int{idx(info["source"]), idx(info["delegate"]), idx(info["owner"])}
	case "burn":
		data = append([]byte{8}, u64(info["amount"])...)
		in.Accounts = []int{idx(info["account"]), idx(info["mint"]), idx(info["authority"])}
	default:
		t.Fatalf("no compiler for %v", p["type"])
	}
	in.Data = base58.Encode(data)
	return in
}

// TestParsedShapesMatchCaptures rebuilds the compiled form of every parsed
// instruction in a real jsonParsed getTransaction answer (solana-go's test
// capture: a System transfer, spl-token approve and burn) and checks that
// the fake's parser prints each exactly as agave did, member by member
// (stackHeight, which the capture predates, aside).
func TestParsedShapesMatchCaptures(t *testing.T) {
	b, err := os.ReadFile("../testdata/solanago_test_getTransaction_jsonParsed.json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Meta struct {
			InnerInstructions []struct {
				Instructions []map[string]any `json:"instructions"`
			} `json:"innerInstructions"`
		} `json:"meta"`
		Transaction struct {
			Message struct {
				Instructions []map[string]any `json:"instructions"`
			} `json:"message"`
		} `json:"transaction"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	all := c.Transaction.Message.Instructions
	for _, g := range c.Meta.InnerInstructions {
		all = append(all, g.Instructions...)
	}
	checked := 0
	for _, want := range all {
		if _, parsed := want["parsed"]; !parsed {
			continue
		}
		var keys []string
		in := compile(t, &keys, want)
		got := parseInstruction(keys, in)
		delete(got, "stackHeight")
		var gotJSON, wantJSON any
		_ = json.Unmarshal(mustJSON(got), &gotJSON)
		_ = json.Unmarshal(mustJSON(want), &wantJSON)
		if !reflect.DeepEqual(gotJSON, wantJSON) {
			t.Errorf("parsed instruction\n got %s\nwant %s", mustJSON(got), mustJSON(want))
		}
		checked++
	}
	if checked != 4 {
		t.Fatalf("checked %d parsed instructions, the capture has 4", checked)
	}
}

// TestParsedRealV0Transaction serves a real failed v0 mainnet transaction
// (MetaMask's capture, 25 keys of which 16 from lookup tables, Jupiter
// routing through spl-token: two transfers, two transferChecked) in the jsonParsed encoding: lookup-table keys
// are tagged, loadedAddresses is gone, the spl-token inner instructions are
// parsed with the amounts their data carries, and what agave does not parse
// (Compute Budget, Jupiter) stays partially decoded.
func TestParsedRealV0Transaction(t *testing.T) {
	b, err := os.ReadFile("../testdata/metamask_mainnet_failed_v0_tx_58FymkjJ.json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Transaction struct {
			Signatures []string `json:"signatures"`
		} `json:"transaction"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	n := New()
	n.AddCapturedTransaction(c.Transaction.Signatures[0], b)
	srv := httptest.NewServer(n)
	defer srv.Close()
	a := call(t, srv.URL, "getTransaction", c.Transaction.Signatures[0], map[string]any{"encoding": "jsonParsed", "maxSupportedTransactionVersion": 0})
	if a.Error != nil {
		t.Fatal(a.Error)
	}
	var got struct {
		Meta        map[string]json.RawMessage `json:"meta"`
		Transaction struct {
			Message struct {
				AccountKeys []struct {
					Pubkey, Source string
				} `json:"accountKeys"`
				AddressTableLookups []any            `json:"addressTableLookups"`
				Instructions        []map[string]any `json:"instructions"`
			} `json:"message"`
		} `json:"transaction"`
		Version any `json:"version"`
	}
	if err := json.Unmarshal(a.Result, &got); err != nil {
		t.Fatal(err)
	}
	m := got.Transaction.Message
	lookup := 0
	for _, k := range m.AccountKeys {
		if k.Source == "lookupTable" {
			lookup++
		}
	}
	if len(m.AccountKeys) != 25 || lookup != 16 || len(m.AddressTableLookups) == 0 || got.Version != 0.0 {
		t.Fatalf("keys %d (%d from tables), lookups %d, version %v", len(m.AccountKeys), lookup, len(m.AddressTableLookups), got.Version)
	}
	if _, ok := got.Meta["loadedAddresses"]; ok {
		t.Error("jsonParsed meta keeps loadedAddresses")
	}
	for _, in := range m.Instructions {
		if _, parsed := in["parsed"]; parsed {
			t.Errorf("a Compute Budget or Jupiter instruction was parsed: %v", in)
		}
	}
	var inner []struct {
		Instructions []map[string]any `json:"instructions"`
	}
	if err := json.Unmarshal(got.Meta["innerInstructions"], &inner); err != nil {
		t.Fatal(err)
	}
	transfers := 0
	for _, in := range inner[0].Instructions {
		if in["programId"] != TokenProgram {
			continue
		}
		p := in["parsed"].(map[string]any)
		info := p["info"].(map[string]any)
		switch p["type"] {
		case "transfer":
			if info["amount"] == nil || info["authority"] == nil {
				t.Errorf("transfer info: %v", info)
			}
		case "transferChecked":
			if a := info["tokenAmount"].(map[string]any); a["amount"] == nil || info["mint"] == nil || info["authority"] == nil {
				t.Errorf("transferChecked info: %v", info)
			}
		default:
			t.Errorf("spl-token inner instruction: %v", in)
		}
		if in["program"] != "spl-token" || in["stackHeight"] != 3.0 {
			t.Errorf("spl-token inner instruction: %v", in)
		}
		transfers++
	}
	if transfers != 4 {
		t.Fatalf("%d spl-token transfers parsed, the capture has 4", transfers)
	}
}

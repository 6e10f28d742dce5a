package solanafake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mr-tron/base58"
)

type answer struct {
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
	ID     json.RawMessage `json:"id"`
}

func post(t *testing.T, url, ctype, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url, ctype, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

func call(t *testing.T, url, method string, params ...any) answer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	_, out := post(t, url, "application/json", string(body))
	var a answer
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return a
}

// getSignaturesForAddress pages newest first with limit, before and until,
// like agave, and reports failed transactions with their err.
func TestSignaturesPaging(t *testing.T) {
	n := New()
	srv := httptest.NewServer(n)
	defer srv.Close()
	var to [32]byte
	to[0] = 7
	var sigs []string // oldest first
	for i := range 5 {
		sigs = append(sigs, n.PaySOL([32]byte{1}, to, uint64(100+i), i == 2, false))
		n.Mine(1)
	}
	addr := base58.Encode(to[:])
	list := func(cfg map[string]any) []string {
		a := call(t, srv.URL, "getSignaturesForAddress", addr, cfg)
		if a.Error != nil {
			t.Fatalf("%+v", a.Error)
		}
		var got []struct {
			Signature, ConfirmationStatus string
			Err                           json.RawMessage
		}
		if err := json.Unmarshal(a.Result, &got); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, g := range got {
			s := g.Signature[:4]
			if string(g.Err) != "null" {
				s += "!"
			}
			out = append(out, s)
		}
		return out
	}
	short := func(idx ...int) []string {
		var out []string
		for _, i := range idx {
			s := sigs[i][:4]
			if i == 2 {
				s += "!"
			}
			out = append(out, s)
		}
		return out
	}
	for _, tc := range []struct {
		cfg  map[string]any
		want []string
	}{
		{map[string]any{}, short(4, 3, 2, 1, 0)},
		{map[string]any{"limit": 2}, short(4, 3)},
		{map[string]any{"before": sigs[3], "limit": 2}, short(2, 1)},
		{map[string]any{"until": sigs[1]}, short(4, 3, 2)},
		{map[string]any{"before": sigs[4], "until": sigs[2]}, short(3)},
	} {
		if got := list(tc.cfg); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%v: %v, want %v", tc.cfg, got, tc.want)
		}
	}
	if a := call(t, srv.URL, "getSignaturesForAddress", addr, map[string]any{"commitment": "processed"}); a.Error == nil || a.Error.Code != -32602 {
		t.Fatalf("processed: %+v", a)
	}
	if a := call(t, srv.URL, "getSignaturesForAddress", "abc"); a.Error == nil || a.Error.Message != "Invalid param: WrongSize" {
		t.Fatalf("short address: %+v", a)
	}
}

// getTransaction: v0 needs maxSupportedTransactionVersion (-32015), legacy
// does not and carries no version member; unknown signatures are null.
func TestGetTransactionVersions(t *testing.T) {
	n := New()
	srv := httptest.NewServer(n)
	defer srv.Close()
	legacy := n.PaySOL([32]byte{1}, [32]byte{2}, 5, false, false)
	v0 := n.PaySOL([32]byte{1}, [32]byte{3}, 5, false, true)
	n.Mine(1)
	if a := call(t, srv.URL, "getTransaction", v0, "json"); a.Error == nil || a.Error.Code != -32015 {
		t.Fatalf("v0 without max version: %+v", a)
	}
	a := call(t, srv.URL, "getTransaction", legacy, "json")
	if a.Error != nil || bytes.Contains(a.Result, []byte(`"version"`)) {
		t.Fatalf("legacy: %s %+v", a.Result, a.Error)
	}
	a = call(t, srv.URL, "getTransaction", legacy, map[string]any{"encoding": "json", "maxSupportedTransactionVersion": 0})
	if a.Error != nil || !bytes.Contains(a.Result, []byte(`"version":"legacy"`)) {
		t.Fatalf("legacy with max version: %s", a.Result)
	}
	a = call(t, srv.URL, "getTransaction", v0, map[string]any{"encoding": "base64", "maxSupportedTransactionVersion": 0})
	if a.Error != nil || !bytes.Contains(a.Result, []byte(`"base64"]`)) || !bytes.Contains(a.Result, []byte(`"version":0`)) {
		t.Fatalf("v0 base64: %s %+v", a.Result, a.Error)
	}
	var missing [64]byte
	if a := call(t, srv.URL, "getTransaction", base58.Encode(missing[:])); a.Error != nil || string(a.Result) != "null" {
		t.Fatalf("unknown signature: %s %+v", a.Result, a.Error)
	}
}

// HTTP framing: POST with application/json only, 50 KiB bodies,
// notifications unanswered, getBlocks with its config in second place.
func TestHTTPFraming(t *testing.T) {
	n := New()
	srv := httptest.NewServer(n)
	defer srv.Close()
	if code, _ := post(t, srv.URL, "text/plain", `{}`); code != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain: %d", code)
	}
	if code, _ := post(t, srv.URL, "application/json", strings.Repeat(" ", 60<<10)+`{}`); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("60 KiB: %d", code)
	}
	if code, out := post(t, srv.URL, "application/json", `{"jsonrpc":"2.0","method":"getSlot"}`); code != 200 || len(out) != 0 {
		t.Fatalf("notification: %d %s", code, out)
	}
	n.Mine(3)
	n.Skip(1)
	n.Mine(1)
	a := call(t, srv.URL, "getBlocks", 2, map[string]any{"commitment": "confirmed"})
	if a.Error != nil || string(a.Result) != "[2,3,5]" {
		t.Fatalf("getBlocks(2, config): %s %+v", a.Result, a.Error)
	}
	a = call(t, srv.URL, "getBlocksWithLimit", 1, 3)
	if a.Error != nil || string(a.Result) != "[1,2,3]" {
		t.Fatalf("getBlocksWithLimit: %s %+v", a.Result, a.Error)
	}
	a = call(t, srv.URL, "getBlock", 4)
	if a.Error == nil || a.Error.Code != -32007 || a.Error.Message != "Slot 4 was skipped, or missing due to ledger jump to recent snapshot" {
		t.Fatalf("skipped: %+v", a.Error)
	}
}

// The node serves readers while it mines (run with -race).
func TestConcurrentUse(t *testing.T) {
	n := New()
	srv := httptest.NewServer(n)
	defer srv.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			n.PaySOL([32]byte{1}, [32]byte{byte(i)}, 1, false, i%2 == 0)
			n.Mine(1)
		}
	}()
	for i := 0; ; i++ {
		select {
		case <-done:
			return
		default:
		}
		a := call(t, srv.URL, "getBlock", n.Tip(), map[string]any{"maxSupportedTransactionVersion": 0, "transactionDetails": "accounts"})
		if a.Error != nil {
			t.Fatalf("getBlock during mining: %+v", a.Error)
		}
	}
}

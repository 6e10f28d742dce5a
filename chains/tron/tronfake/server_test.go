package tronfake_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/paywatch/paywatch/chains/tron/tronfake"
)

func call(t *testing.T, srv *httptest.Server, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data)
}

func acct(b byte) []byte {
	s := sha256.Sum256([]byte{b})
	return s[:20]
}

func TestWireShapes(t *testing.T) {
	n := tronfake.New()
	srv := httptest.NewServer(n)
	defer srv.Close()
	n.Mine(2)
	usdt := acct(9)
	trx := n.PayTRX(acct(1), acct(2), 5_000_000, true)
	trc := n.PayTRC20(usdt, acct(1), acct(3), big.NewInt(532079999), true)
	n.Mine(1)

	// An empty block has no "transactions" key.
	_, body := call(t, srv, "POST", "/wallet/getblockbynum", `{"num":1}`)
	if strings.Contains(body, "transactions") || !strings.Contains(body, `"number":1`) {
		t.Fatalf("empty block: %s", body)
	}
	// The block with both payments, addresses 41-hex, txID = sha256(raw_data_hex).
	_, body = call(t, srv, "POST", "/wallet/getblockbynum", `{"num": 3}`)
	var blk struct {
		BlockID      string `json:"blockID"`
		Transactions []struct {
			TxID       string `json:"txID"`
			RawDataHex string `json:"raw_data_hex"`
			Ret        []struct {
				ContractRet string `json:"contractRet"`
			} `json:"ret"`
			RawData struct {
				Contract []struct {
					Type      string `json:"type"`
					Parameter struct {
						Value map[string]any `json:"value"`
					} `json:"parameter"`
				} `json:"contract"`
			} `json:"raw_data"`
		} `json:"transactions"`
	}
	if err := json.Unmarshal([]byte(body), &blk); err != nil {
		t.Fatal(err)
	}
	if len(blk.Transactions) != 2 || blk.Transactions[0].TxID != trx || blk.Transactions[1].TxID != trc {
		t.Fatalf("block 3 txs: %s", body)
	}
	if !strings.HasPrefix(blk.BlockID, "0000000000000003") {
		t.Fatalf("blockID %s does not start with the number", blk.BlockID)
	}
	for _, tx := range blk.Transactions {
		raw, _ := hex.DecodeString(tx.RawDataHex)
		if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != tx.TxID {
			t.Fatalf("txID %s != sha256(raw_data_hex)", tx.TxID)
		}
	}
	if to := blk.Transactions[0].RawData.Contract[0].Parameter.Value["to_address"]; to != "41"+hex.EncodeToString(acct(2)) {
		t.Fatalf("to_address %v", to)
	}
	// Infos: log address without 41, topics without 0x.
	_, body = call(t, srv, "POST", "/wallet/gettransactioninfobyblocknum", `{"num":3}`)
	wantLog := `"address":"` + hex.EncodeToString(usdt) + `"`
	if !strings.Contains(body, wantLog) || !strings.Contains(body, `"blockNumber":3`) ||
		!strings.Contains(body, "000000000000000000000000"+hex.EncodeToString(acct(3))) {
		t.Fatalf("infos: %s", body)
	}
	// GET works like POST.
	_, get := call(t, srv, "GET", "/wallet/getblockbynum?num=3", "")
	_, post := call(t, srv, "POST", "/wallet/getblockbynum", `{"num":3}`)
	if get != post {
		t.Fatalf("GET and POST differ")
	}
}

func TestRejectsWhatJavaTronRejects(t *testing.T) {
	n := tronfake.New()
	srv := httptest.NewServer(n)
	defer srv.Close()
	n.Mine(5)
	cases := []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/wallet/getblockbynumber", `{"num":1}`, 404, "HTTP ERROR 404"},
		{"POST", "/wallet/getnowblock/", ``, 404, "HTTP ERROR 404"},
		{"PUT", "/wallet/getblockbynum", `{"num":1}`, 405, "not supported"},
		{"POST", "/wallet/getblockbynum", `{"num":`, 200, `{"Error":"class com.alibaba.fastjson.JSONException : syntax error`},
		{"POST", "/wallet/getblockbynum", `[1]`, 200, `{"Error":"class com.alibaba.fastjson.JSONException`},
		{"POST", "/wallet/getblockbynum", ``, 200, `JsonFormat$ParseException`},
		{"POST", "/wallet/getblockbynum", `{"num":"x"}`, 200, `JsonFormat$ParseException : 1:`},
		{"POST", "/wallet/getblockbynum", `{"num":1.5}`, 200, `Couldn't parse integer`},
		{"GET", "/wallet/getblockbynum", ``, 200, `{"Error":"class java.lang.NumberFormatException : null"}`},
		{"GET", "/wallet/getblockbynum?num=abc", ``, 200, `NumberFormatException : For input string: \"abc\"`},
		{"POST", "/wallet/getblockbynum", `{"num":-1}`, 200, "{}\n"},
		{"POST", "/wallet/getblockbynum", `{"num":99}`, 200, "{}\n"},
		{"POST", "/wallet/getblockbylimitnext", `{"startNum":3,"endNum":3}`, 200, "{}\n"},
		{"POST", "/wallet/getblockbylimitnext", `{"startNum":0,"endNum":101}`, 200, "{}\n"},
		{"POST", "/wallet/getblockbylimitnext", `{"startNum":50,"endNum":60}`, 200, "{\"block\":[]}\n"},
		{"POST", "/wallet/gettransactioninfobyblocknum", `{"num":0}`, 200, "{}\n"},
		{"POST", "/wallet/gettransactioninfobyblocknum", `{"num":99}`, 200, "[]\n"},
		{"POST", "/wallet/getblockbynum", `{"num":1,"visible":true}`, 200, `{"Error":`},
	}
	for _, c := range cases {
		status, body := call(t, srv, c.method, c.path, c.body)
		if status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s %s %q: %d %q, want %d containing %q", c.method, c.path, c.body, status, body, c.status, c.want)
		}
	}
	// A missing num is 0: the genesis block, whose number field is omitted.
	_, body := call(t, srv, "POST", "/wallet/getblockbynum", `{}`)
	if !strings.Contains(body, `"blockID":"0000000000000000`) || strings.Contains(body, `"number"`) {
		t.Errorf("missing num: %s", body)
	}
	// getblockbylimitnext: endNum exclusive, at most 100.
	_, body = call(t, srv, "POST", "/wallet/getblockbylimitnext", `{"startNum":2,"endNum":4}`)
	if strings.Count(body, `"blockID"`) != 2 || !strings.Contains(body, `"number":2`) || !strings.Contains(body, `"number":3`) {
		t.Errorf("limitnext 2..4: %s", body)
	}
}

func TestSolidifiedAndReorg(t *testing.T) {
	n := tronfake.New()
	srv := httptest.NewServer(n)
	defer srv.Close()
	n.SetSolidifiedLag(3)
	n.Mine(10)
	if n.Solidified() != 7 {
		t.Fatalf("solidified %d, want 7", n.Solidified())
	}
	_, body := call(t, srv, "POST", "/walletsolidity/getnowblock", ``)
	if !strings.Contains(body, `"number":7`) {
		t.Fatalf("solidity getnowblock: %s", body)
	}
	_, body = call(t, srv, "POST", "/walletsolidity/getblockbynum", `{"num":8}`)
	if body != "{}\n" {
		t.Fatalf("solidity getblockbynum above solidified: %s", body)
	}
	if err := n.Reorg(4); !errors.Is(err, tronfake.ErrBelowSolidified) {
		t.Fatalf("Reorg(4) with solidified 7 of 10 = %v", err)
	}
	old9, old10 := n.BlockID(9), n.BlockID(10)
	if err := n.Reorg(2); err != nil {
		t.Fatal(err)
	}
	if n.Tip() != 10 || n.BlockID(9) == old9 || n.BlockID(10) == old10 {
		t.Fatalf("reorg: tip %d, ids %s %s (were %s %s)", n.Tip(), n.BlockID(9), n.BlockID(10), old9, old10)
	}
	_, body = call(t, srv, "POST", "/wallet/getblockbynum", `{"num":9}`)
	if !strings.Contains(body, `"parentHash":"`+n.BlockID(8)+`"`) {
		t.Fatalf("new block 9 does not build on 8: %s", body)
	}
}

func TestFailuresAndAPIKey(t *testing.T) {
	n := tronfake.New()
	srv := httptest.NewServer(n)
	defer srv.Close()
	n.FailNext(tronfake.FailLite)
	n.FailNext(tronfake.Fail429)
	if _, body := call(t, srv, "POST", "/wallet/getnowblock", ``); body != "this API is closed because this node is a lite fullnode" {
		t.Fatalf("lite: %q", body)
	}
	if status, _ := call(t, srv, "POST", "/wallet/getnowblock", ``); status != 429 {
		t.Fatalf("429: %d", status)
	}
	if status, body := call(t, srv, "POST", "/wallet/getnowblock", ``); status != 200 || !strings.Contains(body, "blockID") {
		t.Fatalf("after failures: %d %s", status, body)
	}
	n.RequireAPIKey("k1")
	if status, body := call(t, srv, "POST", "/wallet/getnowblock", ``); status != 401 || !strings.Contains(body, "ApiKey not exists") {
		t.Fatalf("without key: %d %s", status, body)
	}
	if n.APIKeys()[""] != 4 {
		t.Fatalf("keys seen: %v", n.APIKeys())
	}
}

func TestTransactionByID(t *testing.T) {
	n := tronfake.New()
	srv := httptest.NewServer(n)
	defer srv.Close()
	// A captured block: the info by id is the real gettransactioninfobyid answer.
	block, err := os.ReadFile("../testdata/reconstructed_block_30864600.json")
	if err != nil {
		t.Fatal(err)
	}
	infos, err := os.ReadFile("../testdata/mainnet_http_gettransactioninfobyblocknum_30864600.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../testdata/mainnet_http_gettransactioninfobyid_usdt_0af79242.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := n.AddCaptured(block, infos); err != nil {
		t.Fatal(err)
	}
	_, body := call(t, srv, "POST", "/wallet/gettransactioninfobyid",
		`{"value":"0af79242191c6728b79e858a36a4b5c65e4e52b9fcee4dc5af30eac57b6d0953"}`)
	var got, exp any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &exp); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Fatalf("gettransactioninfobyid:\n got %s\nwant %s", body, want)
	}
	// A mined payment, by POST and GET; unknown and malformed ids.
	txid := n.PayTRX(acct(1), acct(2), 1, true)
	n.Mine(1)
	for _, b := range []string{
		func() string {
			_, b := call(t, srv, "POST", "/wallet/gettransactionbyid", `{"value":"`+txid+`"}`)
			return b
		}(),
		func() string { _, b := call(t, srv, "GET", "/wallet/gettransactionbyid?value="+txid, ``); return b }(),
	} {
		if !strings.Contains(b, `"txID":"`+txid+`"`) || !strings.Contains(b, `"raw_data_hex"`) {
			t.Fatalf("gettransactionbyid: %s", b)
		}
	}
	if _, b := call(t, srv, "POST", "/wallet/gettransactionbyid", `{"value":"`+strings.Repeat("00", 32)+`"}`); b != "{}\n" {
		t.Fatalf("unknown id: %q", b)
	}
	if _, b := call(t, srv, "POST", "/wallet/gettransactioninfobyid", `{"value":"xyz"}`); !strings.Contains(b, `{"Error":"class org.tron.core.services.http.JsonFormat$ParseException`) {
		t.Fatalf("non-hex id: %q", b)
	}
	// The solidity API does not know it yet.
	if _, b := call(t, srv, "POST", "/walletsolidity/gettransactionbyid", `{"value":"`+txid+`"}`); b != "{}\n" {
		t.Fatalf("solidity: %q", b)
	}
}

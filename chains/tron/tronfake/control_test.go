package tronfake_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paywatch/paywatch/chains/tron/tronfake"
)

func TestControlHandler(t *testing.T) {
	n := tronfake.New()
	api := httptest.NewServer(n)
	defer api.Close()
	ctl := httptest.NewServer(n.ControlHandler())
	defer ctl.Close()
	post := func(path, body string) (int, string) {
		resp, err := http.Post(ctl.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(out)
	}
	status, body := post("/pay/trc20", `{"contract":"TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t","from":"TWpZXLfsvVuQuJZLkdWNY7XY2teePqPpz7","to":"TBA6CypYJizwA9XdC7Ubgc5F1bxrQ7SqPt","amount":"532079999"}`)
	var pay struct{ TxID string }
	if err := json.Unmarshal([]byte(body), &pay); status != 200 || err != nil || len(pay.TxID) != 64 {
		t.Fatalf("pay: %d %s", status, body)
	}
	if status, body := post("/mine", `{"blocks":1}`); status != 200 || !strings.Contains(body, `"tip":1`) {
		t.Fatalf("mine: %d %s", status, body)
	}
	_, info := call(t, api, "POST", "/wallet/gettransactioninfobyid", `{"value":"`+pay.TxID+`"}`)
	if !strings.Contains(info, "0000000000000000000000000d0707963952f2fba59dd06f2b425ace40b492fe") ||
		!strings.Contains(info, "000000000000000000000000000000000000000000000000000000001fb6e57f") {
		t.Fatalf("info: %s", info)
	}
	for _, c := range []struct{ path, body string }{
		{"/pay/trx", `{"from":"TWpZXLfsvVuQuJZLkdWNY7XY2teePqPpz7","to":"TBA6CypYJizwA9XdC7Ubgc5F1bxrQ7SqPu","sun":"1"}`},
		{"/pay/trx", `{"from":"TWpZXLfsvVuQuJZLkdWNY7XY2teePqPpz7","to":"TBA6CypYJizwA9XdC7Ubgc5F1bxrQ7SqPt","sun":"1.5"}`},
		{"/pay/trx", `{"from":"x","to":"y","sun":"1","extra":1}`},
		{"/mine", `{"blocks":0}`},
		{"/reorg", `{"depth":5}`},
		{"/fail", `{"kind":"teapot"}`},
	} {
		if status, body := post(c.path, c.body); status != 400 {
			t.Errorf("%s %s: %d %s, want 400", c.path, c.body, status, body)
		}
	}
}

func TestProduce(t *testing.T) {
	n := tronfake.New()
	// A wait for the condition, bounded generously, not by the machine's speed.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- n.Produce(ctx, 5*time.Millisecond) }()
	for n.Tip() < 3 {
		select {
		case <-ctx.Done():
			t.Fatal("no blocks produced")
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Produce returned %v", err)
	}
}

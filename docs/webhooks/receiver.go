//go:build ignore

// A paywatch webhook receiver in Go (standard library only).
//
//	PAYWATCH_WEBHOOK_SECRET=... PORT=8000 go run receiver.go
//
// It accepts a delivery only when its Paywatch-Signature verifies under the
// secret, and only when the signature's timestamp is within 5 minutes of
// now; it answers 2xx to an event id it has already handled without
// handling it again (paywatch delivers at least once: after a timeout, a
// restart or a redelivery the same event comes again). Keep the handled
// ids where your orders are (a unique key written in the same transaction
// as the order's update), not in memory as this example does.
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// tolerance is how far a signature's timestamp may be from now.
const tolerance = 5 * time.Minute

var (
	secret []byte
	mu     sync.Mutex
	seen   = map[string]bool{} // handled event ids
)

func main() {
	secret = []byte(os.Getenv("PAYWATCH_WEBHOOK_SECRET"))
	if len(secret) == 0 {
		log.Fatal("set PAYWATCH_WEBHOOK_SECRET (the sandbox writes it to .paywatch/sandbox.env)")
	}
	port := os.Getenv("PORT")
	if port == "" {
		port = "8000"
	}
	http.HandleFunc("POST /", receive)
	fmt.Printf("listening on 127.0.0.1:%s\n", port)
	log.Fatal(http.ListenAndServe("127.0.0.1:"+port, nil))
}

func receive(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "read error", http.StatusBadRequest)
		return
	}
	// Verify the raw bytes, before parsing them.
	if reason := verify(r.Header.Get("Paywatch-Signature"), body, time.Now()); reason != "" {
		fmt.Println("refused", reason)
		http.Error(w, reason, http.StatusBadRequest)
		return
	}
	var ev struct {
		ID   string          `json:"id"`
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID == "" {
		http.Error(w, "not an event", http.StatusBadRequest)
		return
	}
	mu.Lock()
	dup := seen[ev.ID]
	seen[ev.ID] = true
	mu.Unlock()
	if dup {
		fmt.Println("duplicate", ev.ID)
		w.WriteHeader(http.StatusOK) // handled before: say so, do nothing
		return
	}
	// Handle the event here (intent.paid: ship the order, ...).
	fmt.Println("accepted", ev.ID, ev.Type)
	w.WriteHeader(http.StatusOK)
}

// verify checks "t=<unix>,v1=<hex>[,v1=<hex>]": HMAC-SHA256 of "<t>.<body>"
// under the secret, t within tolerance. It returns "" when the delivery is
// genuine, else why not.
func verify(header string, body []byte, now time.Time) string {
	t := int64(-1)
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return "bad timestamp"
			}
			t = n
		case "v1":
			sigs = append(sigs, v)
		}
	}
	if t < 0 || len(sigs) == 0 {
		return "no signature"
	}
	if d := now.Sub(time.Unix(t, 0)); d > tolerance || d < -tolerance {
		return "timestamp outside the 5 minute window"
	}
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "%d.", t)
	m.Write(body)
	want := hex.EncodeToString(m.Sum(nil))
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			return ""
		}
	}
	return "signature does not match"
}

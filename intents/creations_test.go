package intents_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/paywatch/paywatch/api/openapitest"
	"github.com/paywatch/paywatch/config"
	"github.com/paywatch/paywatch/intents"
	"github.com/paywatch/paywatch/payment"
	"github.com/paywatch/paywatch/paywatchtest"
)

// creationCall is one request of TestConcurrentCreationsAnswerAsIfAlone.
type creationCall struct {
	ref, amount, method, key string
	code                     int
	body                     []byte
}

func (c creationCall) payload() string {
	return fmt.Sprintf(`{"kind":"order","reference":%q,"amount_usd":%q,"method":%q}`, c.ref, c.amount, c.method)
}

// Concurrent creations are batched into shared transactions; whatever
// batches they fall into, every request is answered as if it had run
// alone, and the database holds exactly what those answers say:
//   - a reference keeps the amount of its first creation: a creation with
//     another amount is 409 conflict and writes nothing;
//   - an Idempotency-Key answers its first body byte for byte to every
//     repeat of the same body, and 409 idempotency_mismatch to another body;
//   - every 201 names a stored intent with its own address, assigned to
//     it, and one intent.created event; nothing else was stored;
//   - a reference has at most one open intent per method: a creation for
//     a method its payable already has open answers 200 with that intent
//     (the one a 201 answered), taking no address.
//
// The requests are generated from a seed (printed on failure) with
// repeated references, amounts and keys, so batches meet the cases that
// must roll back and run alone. The test also checks that batches formed
// (intents created by one transaction), or it would prove nothing.
func TestConcurrentCreationsAnswerAsIfAlone(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PAYWATCH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (PAYWATCH_SEED=%d reproduces the requests)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	// Half as many addresses kept ahead as there are requests: most
	// batches find theirs free, and some outrun the replenisher.
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin, payment.Ethereum), paywatchtest.WithConfig(func(c *config.Config) {
		for _, n := range c.Networks {
			n.Gap = 60
		}
	}))
	auth := "Bearer " + e.Keys["storefront"]
	api := openapitest.Handler(t, e.API) // answers checked against the OpenAPI document

	const n = 120
	methods := []string{"BTC", "BTC", "ETH", "USDT-ERC20"}
	amounts := []string{"10.00", "10.00", "10.00", "25.00"}
	calls := make([]creationCall, n)
	for i := range calls {
		ref := fmt.Sprintf("ORD-%d", i) // most references are new,
		if rng.IntN(4) == 0 {
			ref = fmt.Sprintf("ORD-%d", rng.IntN(10)) // some repeat
		}
		c := creationCall{
			ref:    ref,
			amount: amounts[rng.IntN(len(amounts))],
			method: methods[rng.IntN(len(methods))],
		}
		if rng.IntN(3) == 0 {
			c.key = fmt.Sprintf("key-%d", rng.IntN(n/3))
		}
		calls[i] = c
	}
	var start sync.WaitGroup
	start.Add(1)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &calls[i]
			req := httptest.NewRequest("POST", "/v1/intents", bytes.NewBufferString(c.payload()))
			req.Header.Set("Authorization", auth)
			if c.key != "" {
				req.Header.Set("Idempotency-Key", c.key)
			}
			rec := httptest.NewRecorder()
			start.Wait()
			api.ServeHTTP(rec, req)
			c.code, c.body = rec.Code, rec.Body.Bytes()
		}()
	}
	start.Done()
	wg.Wait()

	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d: "+format, append([]any{seed}, args...)...)
	}
	type stored struct {
		id, address, method, amountUSD string
		body                           []byte
	}
	var payables = map[string]int64{} // reference -> cents
	rows, err := e.Store.Pool().Query(t.Context(), `SELECT reference, amount_cents FROM payables`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ref string
		var cents int64
		if err := rows.Scan(&ref, &cents); err != nil {
			t.Fatal(err)
		}
		payables[ref] = cents
	}
	rows.Close()

	firstBody := map[string][]byte{} // key -> first 201 or 200 body per payload
	firstCode := map[string]int{}
	firstPayload := map[string]string{}
	created := map[string]stored{} // intent id -> as answered
	type reuse struct{ id, ref, method string }
	var reused []reuse // the 200s
	for _, c := range calls {
		var v struct {
			ID, Address, Method, Reference string
			AmountUSD                      string `json:"amount_usd"`
			Error                          struct{ Code string }
		}
		if err := json.Unmarshal(c.body, &v); err != nil {
			fail("%s: answer %d is not JSON: %s", c.payload(), c.code, c.body)
		}
		cents, err := payment.ParseUSD(c.amount)
		if err != nil {
			t.Fatal(err)
		}
		want, known := payables[c.ref]
		switch c.code {
		case 201, 200:
			if !known || want != int64(cents) {
				fail("%s was answered %d but its payable holds %d cents", c.payload(), c.code, want)
			}
			if v.Reference != c.ref || v.Method != c.method || v.AmountUSD != c.amount {
				fail("%s answered %s", c.payload(), c.body)
			}
			if c.key != "" {
				if prev, ok := firstBody[c.key]; ok {
					if firstPayload[c.key] != c.payload() {
						fail("key %s created for two bodies: %s and %s", c.key, firstPayload[c.key], c.payload())
					}
					if !bytes.Equal(prev, c.body) || firstCode[c.key] != c.code {
						fail("key %s answered two answers to the same request:\n%d %s\n%d %s", c.key, firstCode[c.key], prev, c.code, c.body)
					}
					continue
				}
				firstBody[c.key], firstCode[c.key], firstPayload[c.key] = c.body, c.code, c.payload()
			}
			if c.code == 200 {
				reused = append(reused, reuse{v.ID, c.ref, c.method})
				continue
			}
			if _, dup := created[v.ID]; dup {
				fail("intent %s answered twice without a shared key", v.ID)
			}
			created[v.ID] = stored{v.ID, v.Address, v.Method, v.AmountUSD, c.body}
		case 409:
			switch v.Error.Code {
			case "conflict":
				if known && want == int64(cents) {
					fail("%s was refused as a conflict, but its payable holds that amount", c.payload())
				}
			case "idempotency_mismatch":
				if c.key == "" {
					fail("%s without a key answered idempotency_mismatch", c.payload())
				}
			default:
				fail("%s: 409 %s", c.payload(), c.body)
			}
		default:
			fail("%s: %d %s", c.payload(), c.code, c.body)
		}
	}
	// A 200 answers the intent a 201 created for the same reference and
	// method, and each reference has one intent per method.
	for _, r := range reused {
		if c, ok := created[r.id]; !ok || c.method != r.method {
			fail("a creation of %s %s answered 200 with intent %s, which no creation of that method answered 201", r.ref, r.method, r.id)
		}
	}
	if got := count(t, e, `SELECT count(*) FROM (SELECT 1 FROM intents GROUP BY payable_id, method HAVING count(*) > 1) x`); got != 0 {
		fail("%d payables have two intents of one method", got)
	}
	// A mismatch is only right when the key's request is another body.
	for _, c := range calls {
		if c.code == 409 && bytes.Contains(c.body, []byte("idempotency_mismatch")) {
			if p, ok := firstPayload[c.key]; ok && p == c.payload() {
				fail("%s answered idempotency_mismatch under its own key %s", c.payload(), c.key)
			}
		}
	}

	if got := count(t, e, `SELECT count(*) FROM intents`); got != len(created) {
		fail("%d intents stored, %d answered 201", got, len(created))
	}
	if got := count(t, e, `SELECT count(DISTINCT (network, address)) FROM intents`); got != len(created) {
		fail("%d distinct addresses for %d intents", got, len(created))
	}
	if got := count(t, e, `SELECT count(*) FROM events WHERE type = 'intent.created'`); got != len(created) {
		fail("%d intent.created events for %d intents", got, len(created))
	}
	if got := count(t, e, `SELECT count(*) FROM (SELECT intent_id FROM events WHERE type = 'intent.created'
		GROUP BY intent_id HAVING count(*) = 1) x JOIN intents i ON i.id = x.intent_id`); got != len(created) {
		fail("%d of %d intents have exactly one intent.created event", got, len(created))
	}
	for id, s := range created {
		var address, method, assigned string
		err := e.Store.Pool().QueryRow(t.Context(), `SELECT i.address, i.method,
				CASE WHEN a.key IS NOT NULL AND f.key IS NULL THEN i.id ELSE '' END
			FROM intents i LEFT JOIN addresses a ON a.network = i.network AND a.key = i.address_key
			LEFT JOIN free_addresses f ON f.network = a.network AND f.key = a.key WHERE i.id = $1`, id).
			Scan(&address, &method, &assigned)
		if err != nil {
			fail("intent %s answered 201: %v", id, err)
		}
		if address != s.address || method != s.method || assigned != id {
			fail("intent %s answered %s %s, stored %s %s, address assigned to %q", id, s.method, s.address, method, address, assigned)
		}
		// The intent.created event says what the answer said.
		var data []byte
		if err := e.Store.Pool().QueryRow(t.Context(), `SELECT data::text FROM events WHERE type = 'intent.created' AND intent_id = $1`, id).Scan(&data); err != nil {
			fail("intent %s: its event: %v", id, err)
		}
		var answered, event any
		if json.Unmarshal(s.body, &answered) != nil || json.Unmarshal(data, &event) != nil || !reflect.DeepEqual(answered, event) {
			fail("intent %s answered\n%s\nits intent.created event says\n%s", id, s.body, data)
		}
	}
	if got := count(t, e, `SELECT count(*) FROM payables p WHERE NOT EXISTS (SELECT 1 FROM intents i WHERE i.payable_id = p.id)`); got != 0 {
		fail("%d payables stored with no intent: a refused creation wrote something", got)
	}
	if got := count(t, e, `SELECT count(*) FROM idempotency_keys WHERE status = 0`); got != 0 {
		fail("%d Idempotency-Keys left claimed with no answer", got)
	}
	codes := map[int]int{}
	for _, c := range calls {
		codes[c.code]++
	}
	batched := count(t, e, `SELECT coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM intents GROUP BY xmin::text HAVING count(*) > 1) x`)
	t.Logf("answers %v; %d of %d intents were created in batches", codes, batched, len(created))
	if batched == 0 {
		fail("no two intents were created by one transaction: no batch formed, so this proved nothing")
	}
}

// A creation waiting for its network's running batches gives up when its
// request goes away, and leaves nothing behind; the batches it waited for
// still answer theirs. The running batches are held on a lock of the
// payables table that the test takes.
func TestAWaitingCreationThatGoesAwayWritesNothing(t *testing.T) {
	e := paywatchtest.New(t, paywatchtest.Only(payment.Bitcoin), paywatchtest.WithConfig(func(c *config.Config) {
		c.Networks["bitcoin"].Gap = 20
	}))
	e.Nets.CacheFor = time.Hour // the chain is checked once, before the lock
	ctx := t.Context()
	lock, err := e.Store.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback(ctx)
	if _, err := lock.Exec(ctx, `LOCK TABLE payables IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	create := func(ctx context.Context, ref string) error {
		_, err := e.Service.Create(ctx, intents.CreateRequest{Kind: payment.Order, Reference: ref, AmountUSD: "10.00", Method: "BTC"}, nil)
		return err
	}
	held := make(chan error, 2)
	for i := range 2 {
		go func() { held <- create(ctx, fmt.Sprintf("HELD-%d", i)) }()
	}
	// Both batches the network runs at once wait on the lock.
	for waiting := 0; waiting < 2; {
		waiting = count(t, e, `SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
			WHERE c.relname = 'payables' AND NOT l.granted`)
	}
	// Its request has gone away by the time it would wait.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	done := make(chan error, 1)
	go func() { done <- create(gone, "GONE") }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a waiting creation whose request went away: %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a waiting creation whose request went away still waits for the batches before it")
	}
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-held; err != nil {
			t.Fatalf("a held creation: %v", err)
		}
	}
	if n := count(t, e, `SELECT count(*) FROM payables WHERE reference = 'GONE'`); n != 0 {
		t.Fatalf("the creation that went away stored its payable")
	}
	if n := count(t, e, `SELECT count(*) FROM intents i JOIN payables p ON p.id = i.payable_id WHERE p.reference LIKE 'HELD-%'`); n != 2 {
		t.Fatalf("%d intents for the two held creations", n)
	}
}
